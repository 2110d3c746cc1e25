package flagx

// NoMmapUsage is the help text of the runtime commands' --no-mmap flag
// (llama.cpp's, with the same meaning; runtime.Options.NoMmap).
const NoMmapUsage = "read the model file into memory (2 MiB pages on Linux) instead of memory-mapping it, as llama.cpp's --no-mmap: the same speed whatever the page cache holds of the file, for the file's size in memory"
