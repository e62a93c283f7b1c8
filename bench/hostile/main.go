// Command hostile writes the hostile PDFs of issue 10 into a folder, for
// bench/hostile.sh: bomb.pdf (a content stream inflating to 1 GiB) and
// shared.pdf (20,000 pages drawing one 16 MiB content stream) and
// objstm.pdf (page resources in an object stream behind 1 GiB of zeros).
package main

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/citebook/citebook/internal/hostile"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: hostile DIR")
		os.Exit(2)
	}
	dir := os.Args[1]
	write := func(name string, gen func(f *os.File) error) {
		f, err := os.Create(filepath.Join(dir, name))
		if err == nil {
			err = gen(f)
		}
		if err == nil {
			err = f.Close()
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
	}
	write("bomb.pdf", func(f *os.File) error { return hostile.FlateBomb(f, 1<<30) })
	write("shared.pdf", func(f *os.File) error { return hostile.SharedStream(f, 20000, 16<<20) })
	write("objstm.pdf", func(f *os.File) error { return hostile.ObjStmBomb(f, 1<<30) })
}
