//go:build !amd64 && !ppc64 && !ppc64le

package cksum

// linuxUpdate: Linux's code for this architecture is not mirrored; linux is
// its generic crc32c_base here.
func linuxUpdate() (func(uint32, []byte) uint32, func(uint32, uint32, int) uint32, string) {
	return crc32cTable, nil, "Linux's crc32c_base (a table lookup per byte): this architecture's Linux dispatch is not mirrored"
}
