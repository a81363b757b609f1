-- The slingshot's levels: what stands on the ground (y = 0 is its top), left to right from x = 2.
-- plank {x, y, w, h}: a wooden plank, centre and size (m); stone {x, y, w, h}: heavy; target {x, y}: a
-- target (a ball of 0.3 m radius) resting at that centre. `shots`: the balls the player gets.
local levels = {}

-- two uprights and a lintel: a gate of height h and width w, centred at x on the level y0
local function gate(list, x, y0, w, h, kind)
  kind = kind or "plank"
  list[#list + 1] = { kind, x - w / 2 + 0.15, y0 + h / 2, 0.3, h }
  list[#list + 1] = { kind, x + w / 2 - 0.15, y0 + h / 2, 0.3, h }
  list[#list + 1] = { "plank", x, y0 + h + 0.15, w + 0.4, 0.3 }
  return y0 + h + 0.3
end

levels[1] = (function()
  local l = { name = "The gate", shots = 3 }
  local top = gate(l, 5, 0, 2.0, 1.8)
  l[#l + 1] = { "target", 5, top + 0.3 }
  l[#l + 1] = { "target", 5, 0.3 }
  return l
end)()

levels[2] = (function()
  local l = { name = "Twin towers", shots = 4 }
  local top1 = gate(l, 3.5, 0, 1.6, 1.6)
  top1 = gate(l, 3.5, top1, 1.6, 1.4)
  l[#l + 1] = { "target", 3.5, top1 + 0.3 }
  local top2 = gate(l, 7, 0, 1.6, 2.2)
  l[#l + 1] = { "target", 7, top2 + 0.3 }
  l[#l + 1] = { "target", 7, 0.3 }
  return l
end)()

levels[3] = (function()
  local l = { name = "The keep", shots = 4 }
  l[#l + 1] = { "stone", 2.6, 0.6, 0.8, 1.2 }
  local floor1 = gate(l, 5.5, 0, 2.4, 1.6, "stone")
  l[#l + 1] = { "target", 5.5, 0.3 }
  local floor2 = gate(l, 5.5, floor1, 2.0, 1.4)
  l[#l + 1] = { "target", 5.5, floor1 + 0.3 }
  local roof = gate(l, 5.5, floor2, 1.2, 1.2)
  l[#l + 1] = { "target", 5.5, roof + 0.3 }
  l[#l + 1] = { "target", 8.2, 0.3 }
  return l
end)()

return levels
