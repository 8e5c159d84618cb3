-- wrk script: GET /ping (the bare GET of load-tests/post-path/run.sh); prints the same RESULT line as
-- post-new-keys.lua, counting answers other than 200 as non_201.
non_created = 0
local threads = {}

function setup(thread)
  table.insert(threads, thread)
end

function response(status, headers, body)
  if status ~= 200 then
    non_created = non_created + 1
  end
end

function done(summary, latency, requests)
  local others = 0
  for _, thread in ipairs(threads) do
    others = others + thread:get("non_created")
  end
  local seconds = summary.duration / 1e6
  io.write(string.format(
      "RESULT requests=%d seconds=%.2f rps=%.1f p50_ms=%.2f p90_ms=%.2f p99_ms=%.2f max_ms=%.2f non_201=%d " ..
      "socket_errors=%d\n",
      summary.requests, seconds, summary.requests / seconds,
      latency:percentile(50) / 1000, latency:percentile(90) / 1000, latency:percentile(99) / 1000,
      latency.max / 1000, others,
      summary.errors.connect + summary.errors.read + summary.errors.write + summary.errors.timeout))
end
