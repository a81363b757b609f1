-- scenes/bench/boxes_10k_sweep.lua: the pile of scenes/bench/boxes_10k.lua through the one-axis sort and
-- sweep (the degenerate case for it: ~1,000 boxes overlap on any axis). Run:
-- ./impetus bench scenes/bench/boxes_10k_sweep.lua
local base = dofile((debug.getinfo(1, "S").source:match("^@(.*/)") or "./") .. "boxes_10k.lua")
return {
  title = "10,000 boxes in a pile: sort and sweep",
  camera = base.camera,
  setup = function(world)
    world.broadphase = "sweep"
    base.pile(world)
  end,
}
