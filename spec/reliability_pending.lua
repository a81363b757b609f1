-- reliability, pending: a failing callback leaves the world bit for bit as it was before the step,
-- with every cache that affects later steps (issue 20 item 4, built on the world snapshots of the
-- time-travel work). These cases fail on the engine as it is until that undo lands; the file is
-- named *_pending.lua so that the default run (pattern _spec) leaves it out, and each case moves to
-- spec/reliability_spec.lua as it passes. Run it alone with
--   busted --lua=lua5.4 --pattern=_pending spec/reliability_pending.lua
-- The harness (a child lua5.4 per case, under a time limit) is spec/support/reliability.lua.
local holds = require("reliability").holds

describe("reliability: a failing callback leaves the world as it was", function()
  it("a force field that steps its own world, over a cloth on a plane (fuzz: seed 8, 82 operations shrunk to 4)", function()
    -- the field's call fails (world:step from inside the step); each failed step must leave the
    -- state as it was, bit for bit
    holds [[
      local w = impetus.world()
      w:plane{restitution = 0.0379338140485177, friction = 0.33490488647718242}
      w:cloth{rows = 3, size = 0.92365151489886044, position = {-0.58096975320686184, -1.8957876874311206, 0.66230305037760129},
        pin = "none", mass = 0.62758415359919861, stretch = 1572.5220186806548, shear = 57.676967083443955,
        bend = 0.0074799047914974126, radius = 0.034169016285113832}
      w:field(function() w:step(1 / 60) return 0, 0, 0 end)
      local function state()
        local s = {}
        for _, p in ipairs(w:particles()) do
          for _, key in ipairs {"position", "velocity"} do
            for k = 1, 3 do s[#s + 1] = string.format("%a", p[key][k]) end
          end
        end
        return table.concat(s, " ")
      end
      for i = 1, 12 do
        local before = state()
        local ok, err = pcall(w.step, w, 1e-3)
        assert(not ok and err:find("a script callback failed", 1, true), "a step whose field failed returned")
        assert(state() == before, "failed step " .. i .. " changed the world")
      end
    ]]
  end)

  it("a pinned particle's multipliers and the 60 steps after (fuzz: seed 73, 60 operations shrunk to 7)", function()
    -- the failed step must restore the constraint solver's warm start (the pin's lambda) with the
    -- rest; then 60 steps run as in a world whose field never failed
    holds [[
      local function make(fail_at)
        local w = impetus.world()
        local calls = 0
        w:field(function()
          calls = calls + 1
          if calls == fail_at then error("the field fails once") end
          return 0, 0, 0
        end)
        local p = w:particle{position = {0.74605256915165885, -0.88130961026789567, -0.87452198379099721},
          velocity = {0.53388400979934403, -2.1921065436467213, -2.152903813705306}, radius = 0.29467019065841316}
        w:pin(p, {2.5754908642361718, -0.82879915969038098, -0.2204053605354277})
        w:curve_particle{curve = function(u) return {math.cos(u), math.sin(u), 0} end, u = -0.15638378008830855,
          udot = 1.5207104336714541}
        return w
      end
      local function state(w)
        local s = {}
        for _, p in ipairs(w:particles()) do
          for _, key in ipairs {"position", "velocity"} do for k = 1, 3 do s[#s + 1] = string.format("%a", p[key][k]) end end
        end
        for _, c in ipairs(w:constraints()) do
          for _, l in ipairs(type(c.lambda) == "table" and c.lambda or {c.lambda}) do s[#s + 1] = string.format("%a", l) end
        end
        return table.concat(s, " ")
      end
      local failing, never = make(3), make(-1)
      assert(not pcall(failing.step, failing, 1 / 60), "the field should have failed")
      assert(state(failing) == state(never), "the failed step changed the world (the pin's lambda)")
      for i = 1, 60 do
        failing:step(1 / 60)
        never:step(1 / 60)
        assert(state(failing) == state(never), "step " .. i .. " after the failure differs from a world that never failed")
      end
    ]]
  end)
end)
