-- scenes/bench/pyramid_20.lua: a pyramid of unit boxes with a base of 20 (210 boxes), friction 0.6,
-- dt 1/60: the peer benchmark's second scene. Run: ./impetus bench --steps 1000 scenes/bench/pyramid_20.lua
local function pyramid(world, base)
  base = base or 20
  world:plane { friction = 0.6 }
  for row = 0, base - 1 do
    for k = 0, base - 1 - row do
      world:box { size = { 1, 1, 1 }, friction = 0.6, position = { k - (base - 1 - row) / 2, row + 0.5, 0 },
                  color = { 0.85, 0.55 + 0.02 * row, 0.3 } }
    end
  end
end

return {
  title = "Pyramid of 210 boxes",
  dt = 1 / 60,
  camera = { eye = { 0, 10, 32 }, target = { 0, 9, 0 } },
  pyramid = pyramid,
  setup = function(world)
    world.sleeping = os.getenv("IMPETUS_SLEEP") ~= "0" -- IMPETUS_SLEEP=0: every body awake every step
    pyramid(world, 20)
  end,
}
