-- scenes/truss_bridge.lua: a Pratt truss bridge of rods (Lagrange-multiplier constraints), pinned
-- at the left support and on a roller (a point-on-line constraint) at the right, so it is
-- statically determinate: 21 rods + 1 roller row for the 11 free nodes' 22 in-plane degrees of freedom.
-- A 40 kg load hangs from the deck; drag it with the mouse to load the bridge. Each rod shows its
-- force: red in compression, blue in tension (the multiplier lambda). Nothing sags: the rods are rigid.
-- Keys: L hangs the load from the next deck node.
local PANELS, W, H = 6, 1.0, 1.0
local X0 = -PANELS * W / 2
local S = state -- what setup builds: the runner keeps `state` across hot reloads (which re-run this file)
S.bottom, S.top, S.rods = S.bottom or {}, S.top or {}, S.rods or {}
S.at = S.at or 3 -- the deck node the load hangs from
S.most_t, S.most_c = S.most_t or 0, S.most_c or 0

-- colour each rod by its force. The force on end a is lambda (xa - xb)/L: lambda > 0 pushes the ends
-- apart (compression, red), lambda < 0 pulls them together (tension, blue)
local function paint()
  local biggest = 1
  for _, r in ipairs(S.rods) do biggest = math.max(biggest, math.abs(r.lambda)) end
  S.most_t, S.most_c = 0, 0
  for _, r in ipairs(S.rods) do
    local l = r.lambda
    local s = math.min(1, math.abs(l) / biggest) ^ 0.7
    if l > 0 then r.color = { 0.45 + 0.55 * s, 0.45 - 0.3 * s, 0.45 - 0.3 * s, 1 }
    else r.color = { 0.45 - 0.3 * s, 0.5 - 0.1 * s, 0.45 + 0.55 * s, 1 } end
    S.most_c, S.most_t = math.max(S.most_c, l), math.max(S.most_t, -l)
  end
end

local function hang(world, i)
  if S.hanger and S.hanger:valid() then S.hanger:destroy() end
  S.at = i
  local b = S.bottom[i].position
  S.load.position = { b[1], b[2] - 1.4, 0 }
  S.load.velocity = { 0, 0, 0 }
  S.hanger = world:rod(S.bottom[i], S.load, { color = { 0.9, 0.9, 0.9, 1 } })
end

return {
  title = "Truss bridge of rods",
  keys = { { "l", "hang the load from the next joint" } },
  dt = 1 / 240,
  camera = { mode = "2d", center = { 0, 0.2 }, height = 5.5 },
  grid = false,

  setup = function(world)
    world.integrator = "rk4"
    world.drag = 0.5 -- a little air, so a swinging load settles
    S.bottom, S.top, S.rods = {}, {}, {}
    local node = { radius = 0.07, mass = 2, color = { 0.75, 0.78, 0.82, 1 } }
    for i = 0, PANELS do
      S.bottom[i] = world:particle { position = { X0 + i * W, 0, 0 }, radius = node.radius, mass = node.mass,
        color = node.color, fixed = (i == 0) }
    end
    for i = 1, PANELS - 1 do
      S.top[i] = world:particle { position = { X0 + i * W, H, 0 }, radius = node.radius, mass = node.mass, color = node.color }
    end
    -- the roller: the right support slides along the horizontal
    world:on_line(S.bottom[PANELS], { direction = { 1, 0, 0 }, color = { 0.4, 0.4, 0.45, 1 } })
    local function rod(a, b) S.rods[#S.rods + 1] = world:rod(a, b) end
    for i = 0, PANELS - 1 do rod(S.bottom[i], S.bottom[i + 1]) end         -- bottom chord
    for i = 1, PANELS - 2 do rod(S.top[i], S.top[i + 1]) end               -- top chord
    for i = 1, PANELS - 1 do rod(S.top[i], S.bottom[i]) end                -- verticals
    rod(S.bottom[0], S.top[1]); rod(S.bottom[PANELS], S.top[PANELS - 1])       -- end posts
    for i = 1, PANELS / 2 - 1 do rod(S.top[i], S.bottom[i + 1]) end        -- diagonals, down toward the middle
    for i = PANELS / 2 + 1, PANELS - 1 do rod(S.top[i], S.bottom[i - 1]) end
    S.load = world:particle { position = { 0, -1.4, 0 }, mass = 40, radius = 0.2, color = { 1.0, 0.75, 0.25, 1 } }
    S.hanger = nil
    hang(world, 3)
  end,

  update = function(world) paint() end, -- colours from the last step's multipliers, before drawing

  keypressed = function(world, key)
    if key == "l" then hang(world, S.at % (PANELS - 1) + 1) end
  end,

  draw = function(world, gfx)
    local _, h = gfx.size()
    gfx.text(16, h - 54, string.format("largest tension %.0f N (blue)   largest compression %.0f N (red)   load %.0f N",
      S.most_t, S.most_c, S.load.mass * 9.81), { 0.9, 0.9, 0.9, 1 })
    gfx.text(16, h - 30, string.format("drag the load with the mouse   L: move it along the deck   largest |C| %.1e m",
      world:constraint_error()), { 0.75, 0.75, 0.75, 1 })
  end,
}
