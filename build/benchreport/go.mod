module github.com/svc-dev/svc/build/benchreport

go 1.26.8
