package xlog

// FailedError is what every change gets once the journal has stopped: its
// log can no longer be written (the errno callers see is EIO). Reason says
// what stopped it.
type FailedError struct{ Reason error }

func (e *FailedError) Error() string { return "journal failed: " + e.Reason.Error() }

func (e *FailedError) Unwrap() error { return e.Reason }
