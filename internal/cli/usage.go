package cli

import "strings"

// isCobraUsage recognises the argument errors cobra itself returns (unknown
// command, wrong number of arguments, missing required flag), which carry no
// type of their own.
func isCobraUsage(err error) bool {
	msg := err.Error()
	for _, p := range []string{"unknown command", "accepts ", "requires at least", "requires at most", "required flag", "unknown flag", "unknown shorthand flag", "invalid argument", "flag needs an argument", "if any flags in the group"} {
		if strings.Contains(msg, p) {
			return true
		}
	}
	return false
}
