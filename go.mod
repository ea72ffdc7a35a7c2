module github.com/nccomring/libnccomring

go 1.26.0

require (
	github.com/ebitengine/purego v0.11.3
	github.com/stretchr/testify v1.12.1
	golang.org/x/sys v0.50.0
)

require (
	github.com/chromedp/chromedp v0.23.1
	go.yaml.in/yaml/v3 v3.0.5
)

require (
	github.com/chromedp/cdproto v0.160.1 // indirect
	github.com/go-json-experiment/json v0.0.0-20260213210345-44df1a37e875 // indirect
)
