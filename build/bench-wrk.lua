-- wrk script of make bench (build/bench-served.sh): POSTs the request
-- bodies in $WRK_BODIES (a directory holding 1.json, 2.json, …, as
-- rawbatch -bodies writes them), rotated, with Content-Type
-- application/json to the URL's path; counts every answer that is not a
-- 200 and writes a JSON summary to $WRK_OUT when the run ends.
--
--   WRK_BODIES=dir WRK_OUT=out.json wrk -t2 -c4 -d4s -s build/bench-wrk.lua http://127.0.0.1:8080/predict

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

function setup(thread)
  thread:set("id", next_id)
  next_id = next_id + 1
  table.insert(threads, thread)
end

local requests, n

function init(args)
  local headers = { ["Content-Type"] = "application/json" }
  requests = {}
  for i, b in ipairs(bodies) do
    requests[i] = wrk.format("POST", nil, headers, b)
  end
  -- Each thread starts at its own body, as svc bench's workers do.
  n = id or 0
  non200 = 0
  first_bad = ""
end

function request()
  n = n + 1
  return requests[(n % #requests) + 1]
end

function response(status, headers, body)
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
    '"latency_us": {"mean": %.1f, "p50": %d, "p90": %d, "p99": %d, "max": %d}, "threads": %d, "bodies": %d}\n',
    summary.requests, summary.duration, summary.bytes, bad, json_string(first),
    e.connect, e.read, e.write, e.status, e.timeout,
    latency.mean, latency:percentile(50), latency:percentile(90), latency:percentile(99), latency.max,
    #threads, #bodies)
  local path = os.getenv("WRK_OUT")
  if path and path ~= "" then
    local f = assert(io.open(path, "w"))
    f:write(out)
    f:close()
  else
    io.write(out)
  end
end
