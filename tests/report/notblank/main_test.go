package main

import (
	"image"
	"image/color"
	"image/png"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func write(t *testing.T, img image.Image) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "x.png")
	f, err := os.Create(path)
	require.NoError(t, err)
	require.NoError(t, png.Encode(f, img))
	require.NoError(t, f.Close())
	return path
}

func TestCount(t *testing.T) {
	img := image.NewRGBA(image.Rect(0, 0, 40, 30))
	for y := range 30 {
		for x := range 40 {
			img.Set(x, y, color.White)
		}
	}
	n, w, h, err := count(write(t, img))
	require.NoError(t, err)
	assert.Equal(t, []int{1, 40, 30}, []int{n, w, h})

	img.Set(39, 29, color.Black) // one pixel is a drawing
	img.Set(0, 0, color.RGBA{255, 0, 0, 255})
	n, _, _, err = count(write(t, img))
	require.NoError(t, err)
	assert.Equal(t, 3, n)

	notPNG := filepath.Join(t.TempDir(), "page.html")
	require.NoError(t, os.WriteFile(notPNG, []byte("<!DOCTYPE html><html></html>"), 0o644))
	_, _, _, err = count(notPNG)
	assert.ErrorContains(t, err, "png: invalid format")
}
