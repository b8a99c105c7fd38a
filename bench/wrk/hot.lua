-- Every posting debits the same account (@hot).
function request()
  local _, destination = pair()
  return wrk.format("POST", path .. "/transactions", headers,
    transfer("TRANSFER", "@hot", destination))
end
