package cksum

import "github.com/xlogfs/xlogfs/amd64"

// archImpls returns the amd64 kernels this CPU can run, best first.
func archImpls() []Impl {
	var list []Impl
	for _, k := range amd64.Kernels() {
		list = append(list, Impl{Name: k.Name, Desc: k.Desc, Update: k.Update, Combine: k.Combine, CopyUpdate: k.CopyUpdate})
	}
	return list
}
