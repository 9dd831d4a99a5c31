module github.com/svc-dev/svc/build/benchreport

go 1.26.8

require (
	github.com/svc-dev/svc v0.0.0
	go.uber.org/goleak v1.3.0
)

// The soak sends the attacks that ci/hostile makes (standard library only).
replace github.com/svc-dev/svc => ../..
