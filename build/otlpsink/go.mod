module github.com/svc-dev/svc/build/otlpsink

go 1.26.8
