package cksum

import (
	"fmt"

	"github.com/xlogfs/xlogfs/amd64"
)

// archImpls returns the amd64 kernels this CPU can run, best first. Each
// has its own Combine (a shift by carry-less multiplication).
func archImpls() []Impl { return amd64.Kernels() }

// archChoice says why Best is what it is on this CPU, and how the kernels
// were calibrated.
func archChoice() Choice {
	cpu := amd64.CPU()
	c := Choice{CPU: cpu.String()}
	switch best.Name {
	case "avx512":
		c.Reason = "AVX-512 F and VL with VPCLMULQDQ: the zmm kernel, first of those this CPU runs"
	case "avx2-vpclmul":
		c.Reason = "VPCLMULQDQ and AVX2 without AVX-512: the ymm kernel in VEX encoding"
	case "sse42-clmul":
		c.Reason = "SSE4.2 and PCLMULQDQ without VPCLMULQDQ: the xmm kernel"
	default:
		c.Reason = "no SSE4.2 with PCLMULQDQ: Go's hash/crc32"
	}
	cal := amd64.Calibrated()
	for _, p := range cal.Plans {
		c.Plans = append(c.Plans, p.Kernel+": "+p.String())
	}
	if len(cal.Plans) > 0 {
		if cal.Calibrated {
			c.Calibration = fmt.Sprintf("measured at start in %.1f ms, %d lengths from %d to %d bytes",
				float64(cal.Took.Microseconds())/1000, len(cal.Probes), cal.Probes[0], cal.Probes[len(cal.Probes)-1])
		} else {
			c.Calibration = "default plans (amd64/calibrate_amd64.go): the clock could not time the methods"
		}
		if cal.ZMMFrom > 0 {
			c.Calibration += fmt.Sprintf("; zmm from %d bytes on (Intel's zmm warm-up)", cal.ZMMFrom)
		}
	}
	return c
}
