-- Shared by every scenario (the runner puts this file in front of the scenario's own script).
-- Arguments after "--": accounts, token, ledger path, then scenario-specific ones.
local counter = 0
local threads = {}

function setup(thread)
  counter = counter + 1
  thread:set("id", counter)
  table.insert(threads, thread)
end

accounts, token, path, extra = 0, "", "", {}
headers = {}
counts = {}

function init(args)
  accounts = tonumber(args[1])
  token = args[2]
  path = args[3]
  for i = 4, #args do extra[#extra + 1] = args[i] end
  headers = {["Content-Type"] = "application/json", ["Authorization"] = "Bearer " .. token}
  math.randomseed(os.time() * 1000 + id)
end

function pair()
  local a = math.random(1, accounts)
  local b = math.random(1, accounts - 1)
  if b >= a then b = b + 1 end
  return "@b" .. a, "@b" .. b
end

function transfer(code, source, destination)
  return string.format(
    '{"transactionTypeCode":"%s","variables":{"amount":%d,"source":"%s","destination":"%s"}}',
    code, math.random(1, 100), source, destination)
end

function count(name)
  counts[name] = (counts[name] or 0) + 1
end

function thread_counts()
  local out = {}
  for name, value in pairs(counts) do out[#out + 1] = name .. "=" .. value end
  return table.concat(out, ",")
end

function done(summary, latency, requests)
  local extra_counts = {}
  for _, thread in ipairs(threads) do
    local text = thread:get("counted") or ""
    for name, value in string.gmatch(text, "(%w+)=(%d+)") do
      extra_counts[name] = (extra_counts[name] or 0) + tonumber(value)
    end
  end
  local parts = {}
  for name, value in pairs(extra_counts) do
    parts[#parts + 1] = string.format('"%s":%d', name, value)
  end
  -- every latency recorded, as [microseconds, count] pairs (bench/slices.py adds them up),
  -- for a slice only (WRK_HISTOGRAM=1): each latency(i) walks wrk's histogram from its start
  local buckets = {}
  if os.getenv("WRK_HISTOGRAM") == "1" then
    for i = 1, #latency do
      local value, n = latency(i)
      buckets[#buckets + 1] = string.format("[%d,%d]", value, n)
    end
  end
  local e = summary.errors
  io.write(string.format(
    'WRKJSON {"requests":%d,"duration_us":%d,"errors":{"connect":%d,"read":%d,"write":%d,' ..
    '"status":%d,"timeout":%d},"latency_us":{"p50":%d,"p90":%d,"p99":%d,"max":%d,' ..
    '"mean":%.1f},"counts":{%s},"histogram":[%s]}\n',
    summary.requests, summary.duration, e.connect, e.read, e.write, e.status, e.timeout,
    latency:percentile(50), latency:percentile(90), latency:percentile(99), latency.max,
    latency.mean, table.concat(parts, ","), table.concat(buckets, ",")))
end
