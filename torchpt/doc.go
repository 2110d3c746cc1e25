// Package torchpt writes and reads PyTorch's zip checkpoint format, the
// files `torch.save(state_dict, path)` writes with its default (zip)
// serialization and `torch.load(path, weights_only=True)` reads, for a state
// dict of plain tensors only.
//
// A checkpoint is an uncompressed zip archive (no timestamps, data
// descriptors, ZIP64 end records always present, as PyTorch's miniz writer
// makes them) whose records live under one
// directory, the archive name (torch uses the output file's base name without
// its extension):
//
//	<archive>/data.pkl     pickle (protocol 2) of a dict name → tensor
//	<archive>/byteorder    "little" (torch ≥ 2.0; 1.13 writes none)
//	<archive>/data/<key>   the raw bytes of storage <key> ("0", "1", …)
//	<archive>/version      "3\n"
//
// Every record's data starts at a multiple of 64 bytes of the file: the
// local header's extra field carries an "FB" padding field (PyTorch's
// caffe2/serialize/inline_container.cc, getPadding). Each tensor is pickled
// as a call of torch._utils._rebuild_tensor_v2(storage, offset, size,
// stride, requires_grad, backward_hooks) whose storage is a persistent id
// ('storage', torch.<Type>Storage, key, 'cpu', numel) (torch/serialization.py
// _save); the data records are written in the string order of their keys.
//
// The writer (Write) streams: tensor data is produced by a callback straight
// into the output and each record's CRC-32 and size follow it in a data
// descriptor (miniz's layout, as torch writes it), so memory stays at one
// buffer whatever the checkpoint size and the output may be a pipe.
// The pickle it writes is the byte sequence CPython's pickler makes for the
// same dict (the memo numbering included), so a checkpoint's data.pkl equals
// the one torch.save writes for equal tensors and names.
//
// The reader (Open, Parse) understands the subset of pickle a state dict of
// tensors needs (dict or collections.OrderedDict of _rebuild_tensor_v2
// calls); any other global, opcode or a malformed archive is an error, never
// a panic, and sizes are checked against the data before allocating.
package torchpt
