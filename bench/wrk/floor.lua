-- The reference floor: the same 2-leg transfer through the bench-only raw-SQL endpoint.
function request()
  local source, destination = pair()
  local body = string.format('{"source":"%s","destination":"%s","amount":%d}',
    source, destination, math.random(1, 100))
  return wrk.format("POST", extra[1], headers, body)
end
