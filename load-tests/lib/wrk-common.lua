-- What the wrk scripts share: the development merchant's authorization, Idempotency-Keys unique per run, thread and
-- request, and the RESULT line the reports parse. wrk loads a script once for setup/done and once per thread, each
-- in a Lua state of its own, so a script loads this file at its top from its own directory:
--   local common = dofile((debug.getinfo(1, "S").source:match("^@(.*[/\\])") or "") .. "wrk-common.lua")
-- (wrk names the script as given: relative to the working directory, as run.sh passes it, or absolute).
local common = {}

-- The development key of merchant m_123 (config/dev/config.yaml holds its hash).
common.dev_key = "pa_dev_4Kq9Xz2Lm7Pw3Rt8Vb6Nc1Hs5Jd0Fg"
common.run_id = "run"

local threads = {}
local counter = 0

-- LT_WRK_DELAY_MS (lib/lib.sh sets 10 in smoke mode): every connection waits that long before each request, so a
-- smoke run's load is tiny (4 connections: at most 400 requests/s) instead of as fast as the server answers, which
-- took both cores for every second of wrk. Unset or 0 in a measured run: no delay.
local delay_ms = tonumber(os.getenv("LT_WRK_DELAY_MS") or "")
if delay_ms and delay_ms > 0 then
  function delay()
    return delay_ms
  end
end

-- An authorization of 12.99 EUR on a test card for the merchant.
function common.authorization_body(merchant)
  return '{"merchantId":"' .. merchant .. '","reference":"bench",' ..
         '"amount":{"value":1299,"currency":"EUR"},' ..
         '"card":{"number":"4111111111111111","expiryMonth":12,"expiryYear":2030,"cvc":"123"}}'
end

-- wrk's setup(thread): numbers the threads, so that keys differ across them, and keeps them for done().
function common.setup(thread)
  thread:set("thread_id", #threads + 1)
  table.insert(threads, thread)
end

-- wrk's init(args): the first argument after "--" names the run (default: the time), so runs never share keys.
function common.init(args)
  common.run_id = args[1] or tostring(os.time())
end

-- How many requests this thread made so far.
function common.requests()
  return counter
end

-- A POST with a new Idempotency-Key, authenticated with the API key given (default: the development key).
function common.post(path, body, api_key)
  counter = counter + 1
  return wrk.format("POST", path,
                    {["Content-Type"] = "application/json",
                     ["Idempotency-Key"] = common.run_id .. "-" .. thread_id .. "-" .. counter,
                     ["Authorization"] = "Bearer " .. (api_key or common.dev_key)}, body)
end

-- In done(): a global counter summed over every thread.
function common.total(name)
  local sum = 0
  for _, thread in ipairs(threads) do
    sum = sum + thread:get(name)
  end
  return sum
end

function common.socket_errors(summary)
  return summary.errors.connect + summary.errors.read + summary.errors.write + summary.errors.timeout
end

-- In done(): the RESULT line of throughput and latency, with `others` answers counted as non_201.
function common.print_result(summary, latency, others)
  local seconds = summary.duration / 1e6
  io.write(string.format(
      "RESULT requests=%d seconds=%.2f rps=%.1f p50_ms=%.2f p90_ms=%.2f p99_ms=%.2f max_ms=%.2f non_201=%d " ..
      "socket_errors=%d\n",
      summary.requests, seconds, summary.requests / seconds,
      latency:percentile(50) / 1000, latency:percentile(90) / 1000, latency:percentile(99) / 1000,
      latency.max / 1000, others, common.socket_errors(summary)))
end

-- Sets response() and done() for a script whose answers should all have one status: counts the others (in the
-- global non_created, which wrk reads from each thread) and prints them as non_201 in the RESULT line.
function common.count_answers_other_than(expected)
  non_created = 0
  function response(status, headers, body)
    if status ~= expected then
      non_created = non_created + 1
    end
  end
  function done(summary, latency, requests)
    common.print_result(summary, latency, common.total("non_created"))
  end
end

return common
