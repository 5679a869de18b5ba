package fusefs

import "testing"

func TestUnescapeMountField(t *testing.T) {
	for in, want := range map[string]string{
		`/tmp/plain`:           "/tmp/plain",
		`/tmp/with\040space`:   "/tmp/with space",
		`/a\011tab\012nl\134b`: "/a\ttab\nnl\\b",
		`/trailing\04`:         `/trailing\04`, // too short to be an escape
		`/not\09x`:             `/not\09x`,     // 9 is no octal digit
	} {
		if got := UnescapeMountField(in); got != want {
			t.Errorf("UnescapeMountField(%q) = %q, want %q", in, got, want)
		}
	}
}

// A store mounted nowhere has no mount points, and asking is no error; a
// relative path is made absolute before it is compared (tests/mountcmd
// checks a real mount is found).
func TestStoreMountsNone(t *testing.T) {
	got, err := StoreMounts(t.TempDir())
	if err != nil || len(got) != 0 {
		t.Errorf("StoreMounts of an unmounted directory = %q, %v; want none, no error", got, err)
	}
	if got, err := StoreMounts("."); err != nil || len(got) != 0 {
		t.Errorf("StoreMounts(.) = %q, %v", got, err)
	}
}
