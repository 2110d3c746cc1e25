package main

import (
	"context"
	"os"
	"runtime/pprof"

	"github.com/bitnet-convert/bitnet-convert/convert"
)

func main() {
	f, _ := os.Create("/tmp/cv.prof")
	pprof.StartCPUProfile(f)
	_, err := convert.ConvertDir(context.Background(), "/dev/shm/fmtbench/2b4t", "/dev/shm/fmtbench/o.gguf", true, false, convert.Options{OutType: convert.OutType(os.Args[1])})
	pprof.StopCPUProfile()
	if err != nil {
		panic(err)
	}
}
