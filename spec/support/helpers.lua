-- helpers for the specs: where the build is, temporary files, running the host program.
local helpers = {}

helpers.root = os.getenv("IMPETUS_ROOT") or "."
helpers.build = os.getenv("IMPETUS_BUILD") or (helpers.root .. "/build/release")
helpers.host = helpers.build .. "/bin/impetus"

function helpers.tmpdir()
  local p = io.popen("mktemp -d /tmp/impetus-spec.XXXXXX")
  local dir = p:read("l")
  p:close()
  return dir
end

function helpers.write(path, text)
  local f = assert(io.open(path, "w"))
  f:write(text)
  f:close()
end

-- run a shell command; returns its output (stdout and stderr) and exit status
function helpers.sh(cmd)
  local p = io.popen(cmd .. " 2>&1")
  local out = p:read("a")
  local _, _, code = p:close()
  return out, code
end

-- the string a chunk's source (one that returns a string) gives in a second lua5.4 process with the
-- build's module and env ("VAR=value ...": IMPETUS_SIMD=0, IMPETUS_THREADS=1); returns it and the exit code
function helpers.run_elsewhere(source, env)
  local dir = helpers.tmpdir()
  helpers.write(dir .. "/run.lua", "io.write((function() " .. source .. " end)())")
  local out, code = helpers.sh(string.format("cd %q && %s LUA_PATH='scripts/?.lua;scripts/?/init.lua;;' " ..
    "LUA_CPATH=%q lua5.4 %q", helpers.root, env, helpers.build .. "/lib/?.so", dir .. "/run.lua"))
  os.execute("rm -rf " .. dir)
  return out, code
end

-- assert that a chunk's source gives, in a second process under each env of envs ("IMPETUS_THREADS=1", ...),
-- the very string it gives here; returns that string
function helpers.same_elsewhere(source, envs)
  local here = load(source)()
  for _, env in ipairs(envs) do
    local out, code = helpers.run_elsewhere(source, env)
    assert(code == 0, out)
    assert(out == here, env .. ": the results disagree")
  end
  return here
end

-- run the host with arguments (a string) from the checkout's root; env: "VAR=value ..." or nil
function helpers.run_host(args, env)
  return helpers.sh(string.format("cd %q && env %s IMPETUS_ROOT=%q %q %s", helpers.root, env or "", helpers.root,
    helpers.host, args))
end

-- assert |a - b| <= tol with a readable message
function helpers.near(a, b, tol, what)
  if not (math.abs(a - b) <= tol) then
    error(string.format("%s: expected %.10g within %.3g, got %.10g (off by %.3g)", what or "value", b, tol, a,
      math.abs(a - b)), 2)
  end
end

return helpers
