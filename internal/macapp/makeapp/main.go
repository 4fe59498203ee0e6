// Command makeapp assembles nudge.app around a darwin nudge executable;
// `make app` runs it.
package main

import (
	"flag"
	"fmt"
	"os"

	"nudge/internal/macapp"
)

func main() {
	exe := flag.String("exe", "", "the darwin nudge executable")
	out := flag.String("out", "dist/nudge.app", "the bundle to write")
	version := flag.String("version", "dev", "the version the bundle declares")
	flag.Parse()
	if *exe == "" || flag.NArg() > 0 {
		flag.Usage()
		os.Exit(2)
	}
	if err := os.RemoveAll(*out); err != nil {
		fmt.Fprintln(os.Stderr, "makeapp:", err)
		os.Exit(1)
	}
	if err := macapp.Write(*out, *exe, *version); err != nil {
		fmt.Fprintln(os.Stderr, "makeapp:", err)
		os.Exit(1)
	}
	fmt.Println(*out)
}
