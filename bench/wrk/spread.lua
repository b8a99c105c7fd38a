-- Postings between random pairs of many accounts.
function request()
  local source, destination = pair()
  return wrk.format("POST", path .. "/transactions", headers,
    transfer("TRANSFER", source, destination))
end
