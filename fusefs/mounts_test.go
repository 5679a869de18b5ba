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
