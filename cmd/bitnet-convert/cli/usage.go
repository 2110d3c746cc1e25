package cli

import "strings"

// isCobraUsage recognises the argument errors cobra itself returns (unknown
// command, wrong number of arguments, missing required flag), which carry no
// type of their own. They are matched at the start of the message only: a
// data error that merely contains "invalid argument" (EINVAL from a system
// call) is exit 1, not a usage error (defect D17).
func isCobraUsage(err error) bool {
	msg := err.Error()
	for _, p := range []string{"unknown command", "accepts ", "requires at least", "requires at most", "required flag", "unknown flag", "unknown shorthand flag", "invalid argument", "flag needs an argument", "if any flags in the group"} {
		if strings.HasPrefix(msg, p) {
			return true
		}
	}
	return false
}
