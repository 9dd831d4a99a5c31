-- wrk script of make bench (build/bench-served.sh): POSTs the request
-- bodies in $WRK_BODIES (a directory holding 1.json, 2.json, …, as
-- TestRawBodies of cmd/internal/bench writes them), rotated, with
-- Content-Type application/json to the URL's path; counts every answer
-- that is not a 200 and writes a JSON summary to $WRK_OUT when the run
-- ends.
--
--   WRK_BODIES=dir WRK_OUT=out.json wrk -t2 -c4 -d4s -s build/bench-wrk.lua http://127.0.0.1:8080/predict
--
-- wrk's own latency figures (latency_us) include its correction for
-- coordinated omission: when the run ends, every request slower than the
-- mean interval between requests on a connection adds made-up samples
-- (one per interval it overran), modelling a client that sends at a fixed
-- rate. With WRK_LATENCY=1 the script also times each request itself
-- (measured_us): each request carries an X-Request-ID, which the server
-- echoes, and the time from wrk asking for the request to its answer is
-- kept, without any correction. The bodies are then held once per id (16
-- per body), so it is meant for small bodies.

local dir = os.getenv("WRK_BODIES") or error("WRK_BODIES: the directory of request bodies")
local bodies = {}
for i = 1, 1000 do
  local f = io.open(dir .. "/" .. i .. ".json", "rb")
  if not f then break end
  bodies[i] = f:read("*a")
  f:close()
end
if #bodies == 0 then error("WRK_BODIES: no " .. dir .. "/1.json") end

local threads = {}
local next_id = 0
local timed = (os.getenv("WRK_LATENCY") or "") ~= ""
local ids_per_body = 16

local now_us
if timed then
  local ffi = require("ffi")
  ffi.cdef[[
    typedef struct { long tv_sec; long tv_nsec; } svc_bench_timespec;
    int clock_gettime(int clk, svc_bench_timespec *tp);
  ]]
  local ts = ffi.new("svc_bench_timespec")
  now_us = function()
    ffi.C.clock_gettime(1, ts) -- CLOCK_MONOTONIC
    return tonumber(ts.tv_sec) * 1e6 + tonumber(ts.tv_nsec) / 1e3
  end
end

function setup(thread)
  thread:set("id", next_id)
  next_id = next_id + 1
  table.insert(threads, thread)
end

local requests, request_ids, sent, n

function init(args)
  requests, request_ids, sent = {}, {}, {}
  if timed then
    -- Body i with id k is request (k-1)*#bodies + i: rotating through
    -- them sends the bodies in the same order as without ids.
    for k = 1, ids_per_body do
      for i, b in ipairs(bodies) do
        local rid = "wrk-" .. (id or 0) .. "-" .. k .. "-" .. i
        local headers = { ["Content-Type"] = "application/json", ["X-Request-ID"] = rid }
        requests[#requests + 1] = wrk.format("POST", nil, headers, b)
        request_ids[#requests] = rid
      end
    end
  else
    local headers = { ["Content-Type"] = "application/json" }
    for i, b in ipairs(bodies) do
      requests[i] = wrk.format("POST", nil, headers, b)
    end
  end
  -- Each thread starts at its own body, as svc bench's workers do.
  n = id or 0
  non200 = 0
  first_bad = ""
  lat = {}
end

function request()
  n = n + 1
  local k = (n % #requests) + 1
  if timed then
    sent[request_ids[k]] = now_us()
  end
  return requests[k]
end

function response(status, headers, body)
  if timed then
    local rid = headers["X-Request-Id"] or headers["X-Request-ID"]
    local t0 = rid and sent[rid]
    if t0 then
      lat[#lat + 1] = now_us() - t0
      sent[rid] = nil
    end
  end
  if status ~= 200 then
    non200 = non200 + 1
    if first_bad == "" then
      first_bad = status .. " " .. string.sub(body or "", 1, 200)
    end
  end
end

local function json_string(s)
  s = string.gsub(s, '[%c"\\]', function(c) return string.format("\\u%04x", string.byte(c)) end)
  return '"' .. s .. '"'
end

-- measured summarises the latencies the threads timed themselves.
local function measured()
  local all = {}
  for _, t in ipairs(threads) do
    local l = t:get("lat")
    if l then
      for _, v in ipairs(l) do all[#all + 1] = v end
    end
  end
  if #all == 0 then return "" end
  table.sort(all)
  local sum = 0
  for _, v in ipairs(all) do sum = sum + v end
  local function pct(p) return all[math.max(1, math.ceil(#all * p / 100))] end
  return string.format(', "measured_us": {"count": %d, "mean": %.1f, "p50": %.1f, "p90": %.1f, "p99": %.1f, "max": %.1f}',
    #all, sum / #all, pct(50), pct(90), pct(99), all[#all])
end

function done(summary, latency, _)
  local bad, first = 0, ""
  for _, t in ipairs(threads) do
    bad = bad + t:get("non200")
    local f = t:get("first_bad")
    if first == "" and f and f ~= "" then first = f end
  end
  local e = summary.errors
  local out = string.format(
    '{"requests": %d, "duration_us": %d, "bytes": %d, "non200": %d, "first_non200": %s, ' ..
    '"errors": {"connect": %d, "read": %d, "write": %d, "status": %d, "timeout": %d}, ' ..
    '"latency_us": {"mean": %.1f, "p50": %d, "p90": %d, "p99": %d, "max": %d}, "threads": %d, "bodies": %d%s}\n',
    summary.requests, summary.duration, summary.bytes, bad, json_string(first),
    e.connect, e.read, e.write, e.status, e.timeout,
    latency.mean, latency:percentile(50), latency:percentile(90), latency:percentile(99), latency.max,
    #threads, #bodies, measured())
  local path = os.getenv("WRK_OUT")
  if path and path ~= "" then
    local f = assert(io.open(path, "w"))
    f:write(out)
    f:close()
  else
    io.write(out)
  end
end
