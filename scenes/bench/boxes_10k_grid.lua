-- scenes/bench/boxes_10k_grid.lua: the pile of scenes/bench/boxes_10k.lua through the hash grid.
-- Run: ./impetus bench scenes/bench/boxes_10k_grid.lua
local base = dofile((debug.getinfo(1, "S").source:match("^@(.*/)") or "./") .. "boxes_10k.lua")
return {
  title = "10,000 boxes in a pile: hash grid",
  camera = base.camera,
  setup = function(world)
    world.broadphase = "grid"
    base.pile(world)
  end,
}
