-- Revert: a posting, then its reversal, interleaved per thread.
local queue = {}

function request()
  local id = table.remove(queue)
  if id then
    return wrk.format("POST", path .. "/transactions/" .. id .. "/revert", headers, "")
  end
  local source, destination = pair()
  return wrk.format("POST", path .. "/transactions", headers,
    transfer("TRANSFER", source, destination))
end

function response(status, _, body)
  if status == 201 then
    if string.find(body, '"parentTransactionId":null', 1, true) then
      local id = string.match(body, '^{"id":"([^"]+)"')
      if id then queue[#queue + 1] = id end
      count("postings")
    else
      count("reverts")
    end
  end
  wrk.thread:set("counted", thread_counts())
end
