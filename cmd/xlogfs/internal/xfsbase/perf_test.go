package xfsbase

import (
	"os"
	"strings"
	"testing"
)

// testdata/perf-script-dbench.txt is 60 samples, verbatim, of a real
// perf record -a -e cpu-clock -F 4999 -g on this machine (Linux 6.18)
// during dbench -F on kernel XFS (logbsize 32k), printed by perf script -F
// comm,pid,tid,period,ip,sym; perf's pid was 30039. They are, by hand:
//   - 23 with xlog_cksum on the stack: 11 in xlog_cksum's own context
//     (crc32c, or its AVX-512 kernel below crc32c, under xlog_cksum), 12
//     in softirq work (block completions, blk_done_softirq) run when
//     crc32c re-enabled bottom halves: those are not the checksum's;
//   - 12 idle (swapper, pid 0: halted under default_idle ← do_idle);
//   - 4 of the idle task serving a timer interrupt's softirqs (the
//     scheduler's load balancing): busy;
//   - 6 of perf itself;
//   - 1 dbench sample in crc32c under xfs_dinode_calc_crc (an inode's
//     CRC, not the log's);
//   - 14 others (dbench, kworkers, other processes).
//
// Every sample's period is 200040 ns.
func TestParseScriptRecorded(t *testing.T) {
	f, err := os.Open("testdata/perf-script-dbench.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	p, err := ParseScript(f, 30039, 4999)
	if err != nil {
		t.Fatal(err)
	}
	const period = 200040
	want := Profile{
		Samples: 60, Idle: 12, Self: 6, Busy: 42,
		Cksum: 11, CksumCRC: 11, CRC32C: 12,
		TotalNs: 60 * period, IdleNs: 12 * period, SelfNs: 6 * period,
		BusyNs: 42 * period, CksumNs: 11 * period, CksumCRCNs: 11 * period, CRC32CNs: 12 * period,
	}
	if p != want {
		t.Errorf("profile\n%+v\nwant\n%+v", p, want)
	}
	// Without perf's pid its samples are busy.
	f.Seek(0, 0)
	if p, _ := ParseScript(f, 0, 4999); p.Self != 0 || p.Busy != 48 {
		t.Errorf("no self pid: self %d busy %d, want 0 and 48", p.Self, p.Busy)
	}
}

// The context rule on made-up chains: xlog_cksum counts only when no
// interrupt or softirq frame lies between it and the leaf, and the idle
// task is idle only in its idle loop's own context.
func TestContextRules(t *testing.T) {
	const script = `my prog with spaces 77/78 1000000
	ffffffff81000001 crc32c_x86_3way+0x12 ([kernel.kallsyms])
	ffffffff81000002 crc32c+0x5 ([kernel.kallsyms])
	ffffffff81000003 xlog_cksum+0x40 ([kernel.kallsyms])
	ffffffff81000004 xlog_sync ([kernel.kallsyms])

kworker/0:1H-kb 12/12 1000000
	ffffffff81000005 xlog_cksum
	ffffffff81000006 xlog_sync

app 5/5 1000000
	ffffffff81000007 blk_mq_end_request
	ffffffff81000008 asm_sysvec_call_function_single
	ffffffff81000002 crc32c
	ffffffff81000003 xlog_cksum

swapper 0/0 1000000
	ffffffff81000009 acpi_idle_do_entry
	ffffffff8100000a cpuidle_enter_state
	ffffffff8100000b do_idle

swapper 0/0 1000000
	ffffffff8100000c tick_nohz_idle_enter
	ffffffff8100000b do_idle

swapper 0/0 1000000
	ffffffff8100000d rcu_core
	ffffffff8100000e handle_softirqs
	ffffffff8100000f irq_exit_rcu
	ffffffff8100000b do_idle

app 5/5 0
	ffffffff81999999 [unknown]

`
	p, err := ParseScript(strings.NewReader(script), 0, 1000)
	if err != nil {
		t.Fatal(err)
	}
	if p.Samples != 7 || p.Idle != 2 || p.Busy != 5 || p.Cksum != 2 || p.CksumCRC != 1 || p.CRC32C != 1 {
		t.Errorf("profile %+v: want 7 samples, 2 idle, 5 busy, 2 checksum (1 in crc32c), 1 crc32c", p)
	}
	// The period-less sample weighs 1e9/rate ns; its leaf is a kernel
	// address perf could not name.
	if p.NoPeriod != 1 || p.TotalNs != 7*1000000 || p.UnresolvedKernel != 1 {
		t.Errorf("no period %d, total %d ns, unresolved %d: want 1, 7 ms, 1", p.NoPeriod, p.TotalNs, p.UnresolvedKernel)
	}
}

func TestParseScriptErrors(t *testing.T) {
	for _, c := range []struct{ text, want string }{
		{"\tffffffff81000001 crc32c\n", "line 1: a frame outside a sample"},
		{"not a header\n\tffff x\n", `line 1: "not a header" is no sample header`},
		{"", "no samples"},
	} {
		_, err := ParseScript(strings.NewReader(c.text), 0, 1000)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("ParseScript(%q) = %v, want an error saying %q", c.text, err, c.want)
		}
	}
}
