-- spec/figures/qp_heap.lua: the heap figure of docs/exact_contact.md (QP mode, time of impact): the deepest
-- penetration over 6 seeds of spec/qp_spec.lua's heap of 20 boxes. Run from the checkout:
--   LUA_PATH='scripts/?.lua;scripts/?/init.lua;spec/support/?.lua;;' LUA_CPATH='build/release/lib/?.so;;' lua5.4 spec/figures/qp_heap.lua
local heap = require "qp_heap"
local worst = 0
for seed = 1, 6 do
  local w, _, lowest, deepest = heap(seed, 256)
  print(string.format("seed %d: deepest %.2f mm, lowest %.2f mm, %d impacts cut", seed, deepest * 1e3, lowest * 1e3, w:contact_stats().impacts))
  worst = math.max(worst, deepest, -lowest)
end
print(string.format("deepest over the seeds: %.2f mm", worst * 1e3))
