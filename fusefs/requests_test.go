package fusefs

import (
	"bytes"
	"fmt"
	"testing"
	"unsafe"

	"github.com/hanwen/go-fuse/v2/fuse"
)

// Every opcode the table counts, sent by number through go-fuse's own
// parsing (its ProtocolServer, as both transports do), is counted once
// under its name: the numbers are the kernel's and each wrapper counts
// the opcode it serves.
func TestRequestCountsByOpcode(t *testing.T) {
	seen := map[uint32]bool{}
	for _, o := range fuseOps {
		if seen[o.op] || o.op >= opCount {
			t.Fatalf("opcode %d (%s) twice or out of range", o.op, o.name)
		}
		seen[o.op] = true
		c := CountRequests(fuse.NewDefaultRawFileSystem())
		ps := fuse.NewProtocolServer(c, &fuse.MountOptions{})
		// The op's arguments zeroed, then names for the ops that take
		// them.
		rest := append(make([]byte, 128), "a\x00b\x00"...)
		h := fuse.InHeader{Opcode: o.op, Unique: 1, NodeId: 1, Length: uint32(unsafe.Sizeof(fuse.InHeader{})) + uint32(len(rest))}
		in := [][]byte{unsafe.Slice((*byte)(unsafe.Pointer(&h)), unsafe.Sizeof(h)), rest}
		ps.HandleRequest(in, [][]byte{make([]byte, 1<<16)})
		var b bytes.Buffer
		c.WriteTo(&b)
		if want := fmt.Sprintf("fuse_requests 1\nfuse_%s 1\n", o.name); b.String() != want {
			t.Errorf("opcode %d: counted\n%s\nwant\n%s", o.op, b.String(), want)
		}
	}
}
