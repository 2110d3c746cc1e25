package codegen

import (
	"bytes"
	"embed"
	"strings"
	"text/template"

	"github.com/bitnet-convert/bitnet-convert/format"
)

//go:embed templates/*.tmpl
var templateFS embed.FS

var templates = template.Must(template.ParseFS(templateFS, "templates/*.tmpl"))

type kernelView struct {
	Index int
	format.Kernel
	ThreeK, TwoK int
}

type headerView struct {
	Arch, ArchUpper string
	IsTL2           bool
	Kernels         []kernelView
}

// Header renders include/bitnet-lut-kernels.h for arch and the kernel set
// ks: our own C++ (text/template, templates/*.tmpl) exporting the API
// bitnet.cpp's ggml-bitnet-lut.cpp calls (spec codegen.md §3.3, §3.4):
// ggml_preprocessor, ggml_qgemm_lut, ggml_bitnet_transform_tensor and
// is_type_supported, for the weight layouts of format.TransformTL1 / TransformTL2 and
// the arithmetic of spec §4 (TL2 correct for any batch size). The output is
// a pure function of (arch, ks). It returns Validate's error, if any.
func Header(arch string, ks []format.Kernel) ([]byte, error) {
	if err := format.CheckArch(arch); err != nil {
		return nil, err
	}
	if err := format.Validate(arch, ks); err != nil {
		return nil, err
	}
	v := headerView{Arch: arch, ArchUpper: strings.ToUpper(arch), IsTL2: arch == format.TL2Arch}
	for i, k := range ks {
		v.Kernels = append(v.Kernels, kernelView{Index: i, Kernel: k, ThreeK: k.ThreeK(), TwoK: k.TwoK()})
	}
	var b bytes.Buffer
	if err := templates.ExecuteTemplate(&b, arch+".tmpl", v); err != nil {
		// The templates are embedded and tested: a failure is a bug.
		panic("codegen: " + err.Error())
	}
	return b.Bytes(), nil
}
