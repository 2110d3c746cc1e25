package gguf

import (
	"strings"
	"testing"
)

// TestResolveLayout: id 42 is mainline's g64 Q2_0 or Prism's legacy g128
// by the tensor's span (padded to the alignment), 142/143 have one layout
// each, a span no layout fits is "layout unknown", and a tensor small
// enough that both fit is "layout ambiguous".
func TestResolveLayout(t *testing.T) {
	ne := []uint64{2048, 2} // g64: 1152 bytes, g128: 1088 bytes
	for _, c := range []struct {
		t          Type
		ne         []uint64
		span       uint64
		want       Type
		note       string
		wantString string
	}{
		{TypeQ2_0, ne, 1152, TypeQ2_0, "", "Q2_0"},
		{TypeQ2_0, ne, 1088, TypeQ2_0G128, "", "Q2_0_g128"},
		{TypeQ2_0, ne, 1100, TypeQ2_0G128, "", "Q2_0_g128"}, // padded to 32
		{TypeQ2_0, ne, 2000, LayoutUnknown(42), "type 42: layout unknown (2000 bytes for ne [2048 2]; Q2_0 18 B per 64 = 1152 bytes or Q2_0_g128 34 B per 128 = 1088 bytes)", "id 42 (layout unknown)"},
		{TypeQ2_0, []uint64{128, 1}, 64, TypeQ2_0, "type 42: layout ambiguous", "Q2_0"},
		{TypePQ2_0, ne, 1088, TypePQ2_0, "", "PQ2_0"},
		{TypePTQ1_0, ne, 896, TypePTQ1_0, "", "PTQ1_0"},
		{TypeQ1_0, ne, 576, TypeQ1_0, "", "Q1_0"},
		{TypeI2S, ne, 5, TypeI2S, "", "I2_S"},
	} {
		got, note := ResolveLayout(c.t, c.ne, c.span, 32)
		if got != c.want || !strings.HasPrefix(note, c.note) || (c.note == "") != (note == "") || got.String() != c.wantString {
			t.Errorf("ResolveLayout(%d, %v, %d) = %v (%s), %q; want %v, %q", c.t.ID(), c.ne, c.span, got, got, note, c.want, c.note)
		}
		if got.ID() != c.t.ID() {
			t.Errorf("ID of %v = %d, want %d", got, got.ID(), c.t.ID())
		}
	}
	if !TypePQ2_0.NeedsHadamard() || !TypePTQ1_0.NeedsHadamard() || TypeQ2_0.NeedsHadamard() {
		t.Error("NeedsHadamard")
	}
}
