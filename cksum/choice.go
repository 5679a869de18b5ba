package cksum

// Choice says which implementation Update uses on this CPU and why: what
// xlogfs version and cksum-bench print.
type Choice struct {
	Impl   string `json:"impl"`   // Best's name
	Reason string `json:"reason"` // why it, in a line
	CPU    string `json:"cpu"`    // vendor, family, model and the features the kernels use
	// Plans is each kernel's dispatch, the methods it uses by length
	// (package amd64 names them), as calibrated at start.
	Plans []string `json:"plans,omitempty"`
	// Calibration is how the plans were found: the calibration's time and
	// lengths, or why it fell back to the default plans.
	Calibration string `json:"calibration,omitempty"`
	// Linux is what the linux implementation does on this CPU.
	Linux string `json:"linux"`
}

// Chosen returns the choice of Best and its reasons.
func Chosen() Choice {
	c := archChoice()
	c.Impl = best.Name
	if l, err := Lookup("linux"); err == nil {
		c.Linux = l.Desc
	}
	return c
}
