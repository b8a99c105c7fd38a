-- Pending then commit: a PRE_APPROVED posting, then its commit, interleaved per thread.
local queue = {}

function request()
  local id = table.remove(queue)
  if id then
    return wrk.format("POST", path .. "/transactions/" .. id .. "/commit", headers, "")
  end
  local source, destination = pair()
  return wrk.format("POST", path .. "/transactions", headers,
    transfer("TRANSFER_HELD", source, destination))
end

function response(status, _, body)
  if status == 201 then
    local id = string.match(body, '^{"id":"([^"]+)"')
    if id then queue[#queue + 1] = id end
    count("pending")
  elseif status == 200 then
    count("commits")
  end
  wrk.thread:set("counted", thread_counts())
end
