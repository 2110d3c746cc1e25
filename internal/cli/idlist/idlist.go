// Package idlist parses the comma-separated token-id lists of the --ids flags
// (run, embed, verify).
package idlist

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
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
