// Command notblank exits 0 when the PNG it is given holds more than one
// colour, and 1 when every pixel is the same (a page that drew nothing):
// make test-report's check of chromium's screenshot, with the standard
// library's image/png rather than another tool.
//
//	go run ./tests/report/notblank FILE.png
package main

import (
	"fmt"
	"image/png"
	"os"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: notblank FILE.png")
		os.Exit(2)
	}
	colours, w, h, err := count(os.Args[1])
	if err != nil {
		fmt.Fprintf(os.Stderr, "notblank: %v\n", err)
		os.Exit(2)
	}
	fmt.Printf("notblank: %s: %dx%d, %d colours\n", os.Args[1], w, h, colours)
	if colours < 2 {
		fmt.Fprintf(os.Stderr, "notblank: %s is blank: every pixel is one colour\n", os.Args[1])
		os.Exit(1)
	}
}

// count is the number of distinct colours in the PNG at path, up to 256
// (counting stops a row past 256: enough to tell a drawing from a
// blank), and its size.
func count(path string) (colours, w, h int, err error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, 0, 0, err
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		return 0, 0, 0, fmt.Errorf("%s: %w", path, err)
	}
	b := img.Bounds()
	seen := map[[4]uint32]bool{}
	for y := b.Min.Y; y < b.Max.Y && len(seen) < 256; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			r, g, bl, a := img.At(x, y).RGBA()
			seen[[4]uint32{r, g, bl, a}] = true
		}
	}
	return len(seen), b.Dx(), b.Dy(), nil
}
