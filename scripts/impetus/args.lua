-- args: the checks the host's Lua APIs share (input, camera, sound, contacts, sprites), so a stray
-- argument or a stray entry in a vector is an error that names it, as the engine's bindings do.
local args = {}

-- error unless every argument after the first n is nil; `signature` is the function as it is written
-- ("impetus.input.key_down(key)"), and the error points at the caller of the function that checks
function args.at_most(signature, n, ...)
  for i = n + 1, select("#", ...) do
    local v = select(i, ...)
    if v ~= nil then error(string.format("%s: unexpected argument #%d (%s)", signature, i, type(v)), 3) end
  end
end

-- the first stray key of a vector table (entries 1..n, and the names x, y, z when `named`), or nil
function args.stray(v, n, named)
  for k in pairs(v) do
    local ok = (math.type(k) == "integer" and k >= 1 and k <= n) or (named and (k == "x" or k == "y" or k == "z"))
    if not ok then return type(k) == "string" and string.format("unknown field '%s'", k) or string.format("unexpected entry [%s]", tostring(k)) end
  end
  return nil
end

return args
