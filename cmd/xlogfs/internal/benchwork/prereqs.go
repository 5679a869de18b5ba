package benchwork

import (
	"fmt"
	"os/exec"
	"strings"
)

// RequireCommand fails, naming the Debian package pkg that has it, when
// cmd is not on PATH.
func RequireCommand(cmd, pkg string) error {
	if _, err := exec.LookPath(cmd); err != nil {
		return MissingPackages(cmd, pkg)
	}
	return nil
}

// MissingPackages is the error for a program the bench needs that is not
// installed, with how to install it.
func MissingPackages(what string, pkgs ...string) error {
	return fmt.Errorf("%s not found: install it with apt-get install %s, or make bench (which installs what the workload needs)",
		what, strings.Join(pkgs, " "))
}
