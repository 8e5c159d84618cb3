-- wrk script: the lifecycle after an authorization, each step a request with a new Idempotency-Key: authorizations
-- (POST /v1/authorizations) feed a queue, and each authorization answered 201 is then either captured in full
-- (POST .../captures) or voided (POST .../voids), alternately. Reports how many of each were answered 201, so the
-- capture and void rates come out of one run.
-- Usage: wrk -t1 -c32 -d20s -s capture-void.lua http://127.0.0.1:8080 -- <run-id>
-- Authenticates with the development key (merchant m_123), like post-new-keys.lua; the merchant quota must exceed
-- the run's request count.

local auth_body = '{"merchantId":"m_123","reference":"bench",' ..
                  '"amount":{"value":1299,"currency":"EUR"},' ..
                  '"card":{"number":"4111111111111111","expiryMonth":12,"expiryYear":2030,"cvc":"123"}}'
local capture_body = '{"amount":{"value":1299,"currency":"EUR"}}'
local threads = {}
local counter = 0
local run_id = "run"
local queue = {}
local head, tail = 1, 0
authorizations, captures, voids, others = 0, 0, 0, 0

function setup(thread)
  thread:set("thread_id", #threads + 1)
  table.insert(threads, thread)
end

function init(args)
  run_id = args[1] or tostring(os.time())
end

local function post(path, body)
  counter = counter + 1
  return wrk.format("POST", path,
                    {["Content-Type"] = "application/json",
                     ["Idempotency-Key"] = run_id .. "-" .. thread_id .. "-" .. counter,
                     ["Authorization"] = "Bearer pa_dev_4Kq9Xz2Lm7Pw3Rt8Vb6Nc1Hs5Jd0Fg"}, body)
end

function request()
  if head <= tail then
    local location = queue[head]
    queue[head] = nil
    head = head + 1
    if counter % 2 == 0 then
      return post(location .. "/captures", capture_body)
    end
    return post(location .. "/voids", "{}")
  end
  return post("/v1/authorizations", auth_body)
end

function response(status, headers, body)
  local location = headers["Location"] or headers["location"] or ""
  if status ~= 201 then
    others = others + 1
  elseif location:find("/captures/", 1, true) then
    captures = captures + 1
  elseif location:find("/voids/", 1, true) then
    voids = voids + 1
  else
    authorizations = authorizations + 1
    tail = tail + 1
    queue[tail] = location
  end
end

function done(summary, latency, requests)
  local a, c, v, o = 0, 0, 0, 0
  for _, thread in ipairs(threads) do
    a = a + thread:get("authorizations")
    c = c + thread:get("captures")
    v = v + thread:get("voids")
    o = o + thread:get("others")
  end
  local seconds = summary.duration / 1e6
  io.write(string.format(
      "RESULT requests=%d seconds=%.2f rps=%.1f authorizations_ps=%.1f captures_ps=%.1f voids_ps=%.1f " ..
      "p50_ms=%.2f p99_ms=%.2f non_201=%d socket_errors=%d\n",
      summary.requests, seconds, summary.requests / seconds, a / seconds, c / seconds, v / seconds,
      latency:percentile(50) / 1000, latency:percentile(99) / 1000, o,
      summary.errors.connect + summary.errors.read + summary.errors.write + summary.errors.timeout))
end
