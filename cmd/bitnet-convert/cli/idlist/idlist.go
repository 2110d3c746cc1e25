// Package idlist parses the comma-separated token-id lists of the --ids flags
// (run, embed, verify).
package idlist

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/spf13/pflag"

	"github.com/bitnet-convert/bitnet-convert/cmd/bitnet-convert/cli/usage"
)

// Parse parses "1,2,3" (spaces around items allowed) into non-negative int32
// token ids. An empty or blank list, an empty item, a negative or non-decimal
// item, or one beyond 2^31−1 is an error quoting the item.
func Parse(s string) ([]int32, error) {
	if strings.TrimSpace(s) == "" {
		return nil, errors.New("no token ids")
	}
	var ids []int32
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		v, err := strconv.ParseInt(part, 10, 32)
		if err != nil || v < 0 {
			return nil, fmt.Errorf("%q is not a token id (want non-negative integers separated by commas)", part)
		}
		ids = append(ids, int32(v))
	}
	return ids, nil
}

// PromptOrIDs applies the input rule of run and embed to the parsed flags:
// a model (-m) and exactly one of -p/--prompt and --ids, the ids parsed. It
// returns the ids (nil when the prompt was given) and whether the prompt was
// given; every error is a usage error naming the flags.
func PromptOrIDs(flags *pflag.FlagSet, model, ids string) ([]int32, bool, error) {
	if model == "" {
		return nil, false, usage.Errorf("-m/--model FILE is required")
	}
	hasPrompt := flags.Changed("prompt")
	if hasPrompt == flags.Changed("ids") {
		return nil, false, usage.Errorf("give exactly one of -p/--prompt TEXT and --ids 1,2,3")
	}
	if hasPrompt {
		return nil, true, nil
	}
	parsed, err := Parse(ids)
	if err != nil {
		return nil, false, usage.Errorf("--ids: %v", err)
	}
	return parsed, false, nil
}
