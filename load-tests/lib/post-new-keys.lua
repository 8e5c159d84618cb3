-- wrk script: POST /v1/authorizations, every request with a new Idempotency-Key, so each one is a full
-- authorization (claim the key, run the authorizer, store the authorization and the response) and never a replay.
-- Usage: wrk -t1 -c32 -d20s -s post-new-keys.lua http://127.0.0.1:8080 -- <run-id> [merchants]
-- With merchants N > 1, requests go round-robin to merchants m_lt_1 .. m_lt_N, authenticated with the keys
-- pa_lt_merchant_1 .. pa_lt_merchant_N (store-throughput/run.sh configures their hashes).
-- Authenticates with the development key (merchant m_123): start the service with config/dev/config.yaml or
-- -Dauth.api-keys='sha256:9702b04ac8da313c8ec0784e54e26e65016c0a9c0942463b0c6fb9f354071ab8 m_123', and a merchant quota above the run's request count
-- (-Didempotency.merchant-quota.max-records=2000000, with -Didempotency.max-keys=4000000: startup refuses a merchant
-- quota above half the in-memory store), or every request past it gets 429.

local function body_of(merchant)
  return '{"merchantId":"' .. merchant .. '","reference":"bench",' ..
         '"amount":{"value":1299,"currency":"EUR"},' ..
         '"card":{"number":"4111111111111111","expiryMonth":12,"expiryYear":2030,"cvc":"123"}}'
end
local bodies = {body_of("m_123")}
local api_keys = {"pa_dev_4Kq9Xz2Lm7Pw3Rt8Vb6Nc1Hs5Jd0Fg"}
local threads = {}
local counter = 0
local run_id = "run"
non_created = 0

function setup(thread)
  thread:set("thread_id", #threads + 1)
  table.insert(threads, thread)
end

function init(args)
  run_id = args[1] or tostring(os.time())
  local merchants = tonumber(args[2] or "1")
  if merchants > 1 then
    bodies, api_keys = {}, {}
    for i = 1, merchants do
      bodies[i] = body_of("m_lt_" .. i)
      api_keys[i] = "pa_lt_merchant_" .. i
    end
  end
end

function request()
  counter = counter + 1
  local key = run_id .. "-" .. thread_id .. "-" .. counter
  local m = counter % #bodies + 1
  return wrk.format("POST", "/v1/authorizations",
                    {["Content-Type"] = "application/json", ["Idempotency-Key"] = key,
                     ["Authorization"] = "Bearer " .. api_keys[m]}, bodies[m])
end

function response(status, headers, body)
  if status ~= 201 then
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
