package hf

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"

	"github.com/bitnet-convert/bitnet-convert/internal/fsutil"
)

// MaxConfigBytes bounds the size of a config.json this package will read.
const MaxConfigBytes = 16 << 20

// Config is a parsed config.json kept as a generic JSON object. Numbers are
// json.Number values so integers stay exact. The typed getters take a lookup
// list of keys, and the first key present (and not null) wins, as in
// convert-hf-to-gguf-bitnet.py find_hparam (spec conversion.md §1.2).
type Config struct {
	// Raw is the decoded JSON object (values: json.Number, string, bool,
	// nil, []any, map[string]any).
	Raw map[string]any
	// Path is the file the config came from (for error messages); for a
	// Sub config it is the parent's path.
	Path string
}

// ReadConfig reads and parses the config.json at path. It returns an error
// naming path when the file is missing, larger than MaxConfigBytes, not
// valid JSON, or not a JSON object.
func ReadConfig(path string) (*Config, error) {
	f, err := fsutil.Open(path)
	if err != nil {
		return nil, fmt.Errorf("read config: %w", err)
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, MaxConfigBytes+1))
	if err != nil {
		return nil, fmt.Errorf("read config %s: %w", path, err)
	}
	if len(data) > MaxConfigBytes {
		return nil, fmt.Errorf("config %s is larger than %d bytes; is it really a config.json?", path, MaxConfigBytes)
	}
	return ParseConfig(data, path)
}

// ParseConfig parses config.json bytes; path is used only in error messages.
// Anything but one JSON object (with optional surrounding white space) is an
// error.
func ParseConfig(data []byte, path string) (*Config, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, fmt.Errorf("config %s is not valid JSON: %v", path, err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, fmt.Errorf("config %s has data after the JSON object", path)
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("config %s is not a JSON object", path)
	}
	return &Config{Raw: m, Path: path}, nil
}

// Has reports whether key is present and not JSON null (so "head_dim": null
// counts as absent, as in the head_dim rule of spec §1.2).
func (c *Config) Has(key string) bool {
	v, ok := c.Raw[key]
	return ok && v != nil
}

// asNumber returns v as a json.Number: parsed config.json values are
// json.Number already; maps built in Go or decoded from TOML (presets) hold
// int, int64 or float64, which are formatted the way JSON would spell them.
func asNumber(v any) (json.Number, bool) {
	switch x := v.(type) {
	case json.Number:
		return x, true
	case int:
		return json.Number(strconv.Itoa(x)), true
	case int64:
		return json.Number(strconv.FormatInt(x, 10)), true
	case float64:
		return json.Number(strconv.FormatFloat(x, 'g', -1, 64)), true
	}
	return "", false
}

// first returns the first key in keys that is present and not null.
func (c *Config) first(keys []string) (string, any, bool) {
	for _, k := range keys {
		if v, ok := c.Raw[k]; ok && v != nil {
			return k, v, true
		}
	}
	return "", nil, false
}

// Int returns the value of the first present key as an int. found is false
// when no key is present. The error names the key when the value is not an
// integer (a float with no fraction, e.g. 2048.0, is accepted) or does not
// fit in an int.
func (c *Config) Int(keys ...string) (int, bool, error) {
	k, v, ok := c.first(keys)
	if !ok {
		return 0, false, nil
	}
	n, isNum := asNumber(v)
	if !isNum {
		return 0, true, fmt.Errorf("config %s: %q is %s, want an integer", c.Path, k, jsonKind(v))
	}
	if i, err := strconv.ParseInt(string(n), 10, 64); err == nil {
		if int64(int(i)) != i {
			return 0, true, fmt.Errorf("config %s: %q = %s does not fit in an int", c.Path, k, n)
		}
		return int(i), true, nil
	}
	f, err := strconv.ParseFloat(string(n), 64)
	if err != nil || f != math.Trunc(f) || math.Abs(f) > 1<<53 {
		return 0, true, fmt.Errorf("config %s: %q = %s, want an integer", c.Path, k, n)
	}
	if f > math.MaxInt || f < math.MinInt {
		return 0, true, fmt.Errorf("config %s: %q = %s does not fit in an int", c.Path, k, n)
	}
	return int(f), true, nil
}

// Float returns the value of the first present key as a float64 (integers
// are accepted). The error names the key when the value is not a number.
func (c *Config) Float(keys ...string) (float64, bool, error) {
	k, v, ok := c.first(keys)
	if !ok {
		return 0, false, nil
	}
	n, isNum := asNumber(v)
	if !isNum {
		return 0, true, fmt.Errorf("config %s: %q is %s, want a number", c.Path, k, jsonKind(v))
	}
	f, err := strconv.ParseFloat(string(n), 64)
	if err != nil {
		var ne *strconv.NumError
		if errors.As(err, &ne) && errors.Is(ne.Err, strconv.ErrRange) {
			return 0, true, fmt.Errorf("config %s: %q = %s is out of float64 range", c.Path, k, n)
		}
		return 0, true, fmt.Errorf("config %s: %q = %s, want a number", c.Path, k, n)
	}
	return f, true, nil
}

// String returns the value of the first present key as a string. The error
// names the key when the value is not a JSON string.
func (c *Config) String(keys ...string) (string, bool, error) {
	k, v, ok := c.first(keys)
	if !ok {
		return "", false, nil
	}
	s, isStr := v.(string)
	if !isStr {
		return "", true, fmt.Errorf("config %s: %q is %s, want a string", c.Path, k, jsonKind(v))
	}
	return s, true, nil
}

// Bool returns the value of the first present key as a bool. The error names
// the key when the value is not a JSON boolean.
func (c *Config) Bool(keys ...string) (bool, bool, error) {
	k, v, ok := c.first(keys)
	if !ok {
		return false, false, nil
	}
	b, isBool := v.(bool)
	if !isBool {
		return false, true, fmt.Errorf("config %s: %q is %s, want true or false", c.Path, k, jsonKind(v))
	}
	return b, true, nil
}

// Strings returns the value of the first present key as a list of strings
// (e.g. "architectures"). The error names the key when the value is not an
// array of strings.
func (c *Config) Strings(keys ...string) ([]string, bool, error) {
	k, v, ok := c.first(keys)
	if !ok {
		return nil, false, nil
	}
	arr, isArr := v.([]any)
	if !isArr {
		return nil, true, fmt.Errorf("config %s: %q is %s, want an array of strings", c.Path, k, jsonKind(v))
	}
	out := make([]string, len(arr))
	for i, e := range arr {
		s, isStr := e.(string)
		if !isStr {
			return nil, true, fmt.Errorf("config %s: %q[%d] is %s, want a string", c.Path, k, i, jsonKind(e))
		}
		out[i] = s
	}
	return out, true, nil
}

// Sub returns the nested object under key (e.g. "quantization_config",
// "rope_scaling") as a Config sharing this one's Path. ok is false when the
// key is absent, null, or not an object.
func (c *Config) Sub(key string) (*Config, bool) {
	m, ok := c.Raw[key].(map[string]any)
	if !ok {
		return nil, false
	}
	return &Config{Raw: m, Path: c.Path}, true
}

func jsonKind(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case bool:
		return "a boolean"
	case json.Number:
		return "a number"
	case string:
		return "a string"
	case []any:
		return "an array"
	case map[string]any:
		return "an object"
	}
	return fmt.Sprintf("%T", v)
}
