// bench/peers/peers.cpp: the impetus peer benchmark's scenes built with ODE (QuickStep, 20 iterations) and
// Bullet (sequential impulses, 10 iterations), from their Debian packages (libode-dev, libbullet-dev).
//
//   pile     10 x 10 x 10 unit boxes (1000 kg each), 0.2 m gaps, dropped on a ground plane
//   pyramid  a pyramid of unit boxes with a base of 20 (210 boxes) resting on the ground
//   tower20, tower30  a column of 20 (30) unit boxes built exactly touching on the ground
//   chain    50 capsule links (radius 0.05 m, core 0.3 m, so 0.4 m from tip to tip, density 1000) joined tip
//            to tip by ball joints, the first to the world, released horizontal along +x; no collisions
//            (no ground, links never touch each other). ODE twice: QuickStep (20 iterations) and the direct
//            dWorldStep; Bullet with btPoint2PointConstraint (10 iterations). The joint gap is the distance
//            between a joint's two articulation points (its anchor on each body) after a step; the largest
//            over all joints and all steps is reported, and "blew up at step k" if the state went non-finite
//            or a gap passed 1 m, and the first step with a gap over 1 cm. chain240: the same 16.7 s at dt 1/240.
//
// friction 0.6, dt = 1/60 s, 1000 steps, one thread. Prints, per engine and scene, the median ms/step
// and, for the pyramid and the towers, how far the top box dropped and the largest sideways slide of any box.
// Sleeping is off in both (ODE's auto-disable is off by default; Bullet's deactivation is disabled
// per body) unless --sleep is given. Written for impetus; it uses only the two libraries' public APIs.
#include <ode/ode.h>
#include <btBulletDynamicsCommon.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

namespace {

const double DT = 1.0 / 60.0;
const int STEPS = 1000;
const double MU = 0.6;
bool sleep_on = false;

struct Pose { double x, y, z; };

std::vector<Pose> scene_boxes(const char *scene)
{
    std::vector<Pose> out;
    if (!std::strcmp(scene, "pile")) {
        for (int layer = 0; layer < 10; layer++)
            for (int i = 0; i < 10; i++)
                for (int k = 0; k < 10; k++)
                    out.push_back({(i - 4.5) * 1.2, 0.5 + 0.2 + layer * 1.2, (k - 4.5) * 1.2});
    } else if (!std::strncmp(scene, "tower", 5)) {
        const int n = std::atoi(scene + 5);
        for (int i = 0; i < n; i++) out.push_back({0, i + 0.5, 0});
    } else {
        for (int row = 0; row < 20; row++)
            for (int k = 0; k < 20 - row; k++) out.push_back({k - (19 - row) / 2.0, row + 0.5, 0});
    }
    return out;
}

struct Result { double median_ms, top_drop, max_side; };

double median(std::vector<double> v)
{
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
}

void measure(const std::vector<Pose> &p0, const std::vector<Pose> &p1, Result &r)
{
    r.top_drop = p0.back().y - p1.back().y;
    r.max_side = 0;
    for (size_t i = 0; i < p0.size(); i++)
        r.max_side = std::max(r.max_side, std::sqrt((p1[i].x - p0[i].x) * (p1[i].x - p0[i].x) + (p1[i].z - p0[i].z) * (p1[i].z - p0[i].z)));
}

// ---- ODE ------------------------------------------------------------------------------------------
struct OdeWorld { dWorldID world; dJointGroupID contacts; };

void ode_near(void *data, dGeomID a, dGeomID b)
{
    OdeWorld *w = static_cast<OdeWorld *>(data);
    dBodyID ba = dGeomGetBody(a), bb = dGeomGetBody(b);
    if (ba && bb && dAreConnected(ba, bb)) return;
    dContact c[4];
    int n = dCollide(a, b, 4, &c[0].geom, sizeof(dContact));
    for (int i = 0; i < n; i++) {
        c[i].surface.mode = dContactApprox1;
        c[i].surface.mu = MU;
        dJointID j = dJointCreateContact(w->world, w->contacts, &c[i]);
        dJointAttach(j, ba, bb);
    }
}

Result run_ode(const char *scene)
{
    OdeWorld w;
    w.world = dWorldCreate();
    dWorldSetGravity(w.world, 0, -9.81, 0);
    dWorldSetQuickStepNumIterations(w.world, 20);
    dWorldSetAutoDisableFlag(w.world, sleep_on ? 1 : 0);
    w.contacts = dJointGroupCreate(0);
    dSpaceID space = dHashSpaceCreate(0);
    dCreatePlane(space, 0, 1, 0, 0);
    std::vector<Pose> p0 = scene_boxes(scene);
    std::vector<dBodyID> bodies;
    for (const Pose &p : p0) {
        dBodyID b = dBodyCreate(w.world);
        dMass m;
        dMassSetBox(&m, 1000, 1, 1, 1);
        dBodySetMass(b, &m);
        dBodySetPosition(b, p.x, p.y, p.z);
        dGeomID g = dCreateBox(space, 1, 1, 1);
        dGeomSetBody(g, b);
        bodies.push_back(b);
    }
    std::vector<double> times;
    for (int s = 0; s < STEPS; s++) {
        auto t0 = std::chrono::steady_clock::now();
        dSpaceCollide(space, &w, ode_near);
        dWorldQuickStep(w.world, DT);
        dJointGroupEmpty(w.contacts);
        times.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
    }
    std::vector<Pose> p1;
    for (dBodyID b : bodies) {
        const dReal *x = dBodyGetPosition(b);
        p1.push_back({x[0], x[1], x[2]});
    }
    Result r;
    r.median_ms = median(times);
    measure(p0, p1, r);
    dJointGroupDestroy(w.contacts);
    dSpaceDestroy(space);
    dWorldDestroy(w.world);
    return r;
}

// ---- Bullet ---------------------------------------------------------------------------------------
Result run_bullet(const char *scene)
{
    btDefaultCollisionConfiguration config;
    btCollisionDispatcher dispatcher(&config);
    btDbvtBroadphase broadphase;
    btSequentialImpulseConstraintSolver solver;
    btDiscreteDynamicsWorld world(&dispatcher, &broadphase, &solver, &config);
    world.setGravity(btVector3(0, -9.81, 0));
    world.getSolverInfo().m_numIterations = 10;
    btStaticPlaneShape ground_shape(btVector3(0, 1, 0), 0);
    btRigidBody::btRigidBodyConstructionInfo gi(0, nullptr, &ground_shape);
    gi.m_friction = MU;
    btRigidBody ground(gi);
    world.addRigidBody(&ground);
    btBoxShape box(btVector3(0.5, 0.5, 0.5));
    btVector3 inertia;
    box.calculateLocalInertia(1000, inertia);
    std::vector<Pose> p0 = scene_boxes(scene);
    std::vector<btDefaultMotionState *> states;
    std::vector<btRigidBody *> bodies;
    for (const Pose &p : p0) {
        btTransform t;
        t.setIdentity();
        t.setOrigin(btVector3(p.x, p.y, p.z));
        btDefaultMotionState *ms = new btDefaultMotionState(t);
        btRigidBody::btRigidBodyConstructionInfo bi(1000, ms, &box, inertia);
        bi.m_friction = MU;
        btRigidBody *b = new btRigidBody(bi);
        if (!sleep_on) b->setActivationState(DISABLE_DEACTIVATION);
        world.addRigidBody(b);
        states.push_back(ms);
        bodies.push_back(b);
    }
    std::vector<double> times;
    for (int s = 0; s < STEPS; s++) {
        auto t0 = std::chrono::steady_clock::now();
        world.stepSimulation(DT, 1, DT);
        times.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
    }
    std::vector<Pose> p1;
    for (btRigidBody *b : bodies) {
        const btVector3 &x = b->getCenterOfMassPosition();
        p1.push_back({x.x(), x.y(), x.z()});
    }
    Result r;
    r.median_ms = median(times);
    measure(p0, p1, r);
    for (size_t i = 0; i < bodies.size(); i++) {
        world.removeRigidBody(bodies[i]);
        delete bodies[i];
        delete states[i];
    }
    world.removeRigidBody(&ground);
    return r;
}

// ---- the chain ------------------------------------------------------------------------------------
const int CHAIN_LINKS = 50;
const double CHAIN_R = 0.05, CHAIN_CORE = 0.3, CHAIN_PITCH = CHAIN_CORE + 2 * CHAIN_R, CHAIN_RHO = 1000, CHAIN_Y = 0;
// mass of one link: a cylinder plus a sphere (the two hemispherical caps)
const double CHAIN_MASS = CHAIN_RHO * M_PI * CHAIN_R * CHAIN_R * (CHAIN_CORE + 4.0 / 3.0 * CHAIN_R);

struct ChainResult { double median_ms, max_gap; int over_cm, blew_up; };

// after step s with largest gap `worst`: track the largest, the first step over 1 cm; false once blown up
bool chain_track(ChainResult &r, int s, double worst)
{
    r.max_gap = std::max(r.max_gap, worst);
    if (!r.over_cm && !(worst <= 0.01)) r.over_cm = s;
    if (!(worst < 1.0)) { r.blew_up = s; return false; }
    return true;
}

double dist3(const double *a, const double *b)
{
    return std::sqrt((a[0] - b[0]) * (a[0] - b[0]) + (a[1] - b[1]) * (a[1] - b[1]) + (a[2] - b[2]) * (a[2] - b[2]));
}

// direct: dWorldStep (a dense factorization of the whole system), else dWorldQuickStep with 20 iterations
ChainResult run_ode_chain(bool direct, double dt, int steps)
{
    dWorldID world = dWorldCreate();
    dWorldSetGravity(world, 0, -9.81, 0);
    dWorldSetQuickStepNumIterations(world, 20);
    dWorldSetAutoDisableFlag(world, 0);
    std::vector<dBodyID> links;
    std::vector<dJointID> joints;
    for (int i = 0; i < CHAIN_LINKS; i++) {
        dBodyID b = dBodyCreate(world);
        dMass m;
        dMassSetCapsule(&m, CHAIN_RHO, 1, CHAIN_R, CHAIN_CORE); // axis x
        dBodySetMass(b, &m);
        dBodySetPosition(b, (i + 0.5) * CHAIN_PITCH, CHAIN_Y, 0);
        dJointID j = dJointCreateBall(world, 0);
        dJointAttach(j, b, i ? links.back() : nullptr);
        dJointSetBallAnchor(j, i * CHAIN_PITCH, CHAIN_Y, 0);
        links.push_back(b);
        joints.push_back(j);
    }
    std::vector<double> times;
    ChainResult r{0, 0, 0, 0};
    for (int s = 1; s <= steps; s++) {
        auto t0 = std::chrono::steady_clock::now();
        if (direct) dWorldStep(world, dt);
        else dWorldQuickStep(world, dt);
        times.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
        double worst = 0;
        for (dJointID j : joints) {
            dVector3 a, b;
            dJointGetBallAnchor(j, a);
            dJointGetBallAnchor2(j, b);
            double g = dist3(a, b);
            worst = std::isfinite(g) ? std::max(worst, g) : INFINITY;
        }
        if (!chain_track(r, s, worst)) break;
    }
    r.median_ms = median(times);
    dWorldDestroy(world);
    return r;
}

ChainResult run_bullet_chain(double dt, int steps)
{
    btDefaultCollisionConfiguration config;
    btCollisionDispatcher dispatcher(&config);
    btDbvtBroadphase broadphase;
    btSequentialImpulseConstraintSolver solver;
    btDiscreteDynamicsWorld world(&dispatcher, &broadphase, &solver, &config);
    world.setGravity(btVector3(0, -9.81, 0));
    world.getSolverInfo().m_numIterations = 10;
    btCapsuleShapeX shape(CHAIN_R, CHAIN_CORE);
    // Bullet's capsule inertia is that of its bounding box; give it the exact mass and the same shape's inertia
    btVector3 inertia;
    shape.calculateLocalInertia(CHAIN_MASS, inertia);
    std::vector<btRigidBody *> links;
    std::vector<btDefaultMotionState *> states;
    std::vector<btPoint2PointConstraint *> joints;
    const btVector3 half(0.5 * CHAIN_PITCH, 0, 0);
    for (int i = 0; i < CHAIN_LINKS; i++) {
        btTransform t;
        t.setIdentity();
        t.setOrigin(btVector3((i + 0.5) * CHAIN_PITCH, CHAIN_Y, 0));
        btDefaultMotionState *ms = new btDefaultMotionState(t);
        btRigidBody::btRigidBodyConstructionInfo bi(CHAIN_MASS, ms, &shape, inertia);
        btRigidBody *b = new btRigidBody(bi);
        b->setActivationState(DISABLE_DEACTIVATION);
        world.addRigidBody(b, 2, 0); // collides with nothing
        btPoint2PointConstraint *j = i ? new btPoint2PointConstraint(*b, *links.back(), -half, half)
                                       : new btPoint2PointConstraint(*b, -half);
        world.addConstraint(j, true);
        links.push_back(b);
        states.push_back(ms);
        joints.push_back(j);
    }
    std::vector<double> times;
    ChainResult r{0, 0, 0, 0};
    for (int s = 1; s <= steps; s++) {
        auto t0 = std::chrono::steady_clock::now();
        world.stepSimulation(dt, 1, dt);
        times.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
        double worst = 0;
        for (btPoint2PointConstraint *j : joints) {
            btVector3 pa = j->getRigidBodyA().getCenterOfMassTransform() * j->getPivotInA();
            // the world joint's body B is Bullet's fixed body; its pivot is the world point
            btVector3 pb = j->getRigidBodyB().getCenterOfMassTransform() * j->getPivotInB();
            double g = (pa - pb).length();
            worst = std::isfinite(g) ? std::max(worst, g) : INFINITY;
        }
        if (!chain_track(r, s, worst)) break;
    }
    r.median_ms = median(times);
    for (size_t i = 0; i < links.size(); i++) {
        world.removeConstraint(joints[i]);
        delete joints[i];
        world.removeRigidBody(links[i]);
        delete links[i];
        delete states[i];
    }
    return r;
}

void print_chain(const char *engine, const char *scene, const ChainResult &r)
{
    std::printf("%s %s: %.3f ms/step  max_gap %.3g m", engine, scene, r.median_ms, r.blew_up ? INFINITY : r.max_gap);
    if (r.over_cm) std::printf("  gap over 1 cm from step %d", r.over_cm);
    if (r.blew_up) std::printf("  blew up at step %d", r.blew_up);
    std::printf("\n");
    std::fflush(stdout);
}

} // namespace

int main(int argc, char **argv)
{
    const char *only = nullptr;
    for (int i = 1; i < argc; i++) {
        if (!std::strcmp(argv[i], "--sleep")) sleep_on = true;
        else only = argv[i];
    }
    dInitODE2(0);
    const char *scenes[] = {"pile", "pyramid", "tower20", "tower30", "chain", "chain240"};
    for (const char *scene : scenes) {
        if (only && std::strcmp(only, scene)) continue;
        if (!std::strncmp(scene, "chain", 5)) {
            // chain: dt 1/60, 1000 steps; chain240: the same 16.7 s at dt 1/240
            double dt = scene[5] ? 1.0 / 240.0 : DT;
            int steps = scene[5] ? 4 * STEPS : STEPS;
            print_chain("ode_quick", scene, run_ode_chain(false, dt, steps));
            print_chain("ode_direct", scene, run_ode_chain(true, dt, steps));
            print_chain("bullet", scene, run_bullet_chain(dt, steps));
            continue;
        }
        Result o = run_ode(scene);
        std::printf("ode %s: %.3f ms/step  top_drop %.4f m  max_side %.4f m\n", scene, o.median_ms, o.top_drop, o.max_side);
        std::fflush(stdout);
        Result b = run_bullet(scene);
        std::printf("bullet %s: %.3f ms/step  top_drop %.4f m  max_side %.4f m\n", scene, b.median_ms, b.top_drop, b.max_side);
        std::fflush(stdout);
    }
    dCloseODE();
    return 0;
}
