-- spec/figures/lcp_bench.lua: ms per solve of the pivoting LCP solver (engine/lcp.c) on real contact
-- problems: columns of boxes stacked on the floor, 4 contact points per box (each column couples its
-- boxes; the four coplanar points of every face make A singular). 25 boxes: 100 contacts; 100
-- boxes: 400 contacts. The Lua tables are converted to C arrays on every call; that cost is measured
-- apart (the same A with b >= 0, which needs no pivot) and subtracted.
-- Run: LUA_PATH='scripts/?.lua;scripts/?/init.lua;;' LUA_CPATH='build/release/lib/?.so;;' lua5.4 spec/figures/lcp_bench.lua
local impetus = require "impetus"
local clock = require("impetus.core").clock

local function problem(columns, height)
  local w = impetus.world {}
  w.contact = "qp"
  w:body { static = true, shapes = { { type = "plane" } } }
  for c = 0, columns - 1 do
    for k = 0, height - 1 do
      w:box { size = { 1, 1, 1 }, position = { 2 * c, 0.5 + k, 0 }, mass = 1 + 0.1 * k }
    end
  end
  w:collide()
  return w:contact_system()
end

local function median(t) table.sort(t); return t[(#t + 1) // 2] end

for _, case in ipairs({ { 5, 5 }, { 10, 10 } }) do
  local A, b = problem(case[1], case[2])
  local n = #b
  local pos = {}
  for i = 1, n do pos[i] = 1 end
  local reps = n > 200 and 15 or 60
  local ts, tc = {}, {}
  local info
  for _ = 1, reps do
    local t0 = clock()
    local _, _, inf = impetus.lcp.solve(A, b)
    local t1 = clock()
    impetus.lcp.solve(A, pos)
    local t2 = clock()
    ts[#ts + 1], tc[#tc + 1], info = (t1 - t0) * 1e3, (t2 - t1) * 1e3, inf
  end
  local s, c = median(ts), median(tc)
  print(string.format("%d contacts (%d boxes): %.2f ms per solve (%.2f ms with the table conversion), %d pivots, status %s%s",
    n, case[1] * case[2], s - c, s, info.pivots, info.status, info.regularized and " (regularized)" or ""))
end
