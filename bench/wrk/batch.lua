-- Atomic batches of N transfers between random pairs (N is the fourth argument).
function request()
  local items = {}
  for i = 1, tonumber(extra[1]) do
    local source, destination = pair()
    items[i] = transfer("TRANSFER", source, destination)
  end
  local body = '{"atomic":true,"transactions":[' .. table.concat(items, ",") .. ']}'
  return wrk.format("POST", path .. "/transactions/batch", headers, body)
end
