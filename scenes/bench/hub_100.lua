-- scenes/bench/hub_100.lua: one body with many joints. 100 small boxes on ball joints around a sphere
-- that hangs from the world by its centre, released horizontal 2 m out; no collisions between them. The
-- sphere is a hub node of joint.c's sparse solve (a body with 8 or more joints), so a step costs O(joints)
-- instead of the O(k^3) of the k joints' dense block.
-- Run: ./impetus bench scenes/bench/hub_100.lua --steps 600   (the largest gap is drawn);
-- HUB_PENDULUMS=300 ./impetus bench scenes/bench/hub_100.lua: another count
local K = math.tointeger(tonumber(os.getenv("HUB_PENDULUMS") or "")) or 100
local joints = {}
return {
  title = K .. " pendulums on one hub",
  dt = 1 / 60,
  camera = { eye = { 0, 10.5, 5 }, target = { 0, 9, 0 } },
  setup = function(world)
    world.sleeping = false
    local hub = world:sphere { radius = 0.5, position = { 0, 10, 0 } }
    joints = { world:joint { type = "point", a = hub, anchor = { 0, 10, 0 } } }
    for i = 1, K do
      local a = 2 * math.pi * i / K
      local b = world:box { size = { 0.05, 0.05, 0.05 }, position = { 2 * math.cos(a), 10, 2 * math.sin(a) }, group = 2, mask = 1 }
      joints[#joints + 1] = world:joint { type = "point", a = b, b = hub, anchor = { 0.5 * math.cos(a), 10, 0.5 * math.sin(a) } }
    end
  end,
  draw = function(world, gfx)
    local gap = 0
    for _, j in ipairs(joints) do gap = math.max(gap, j.gap) end
    gfx.text(10, 80, string.format("largest joint gap now %.1e m", gap))
  end,
}
