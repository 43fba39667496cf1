// The shape of AI work an object is (PRODUCT.md, Classification), and
// whether the developer stated it or aiadmit inferred it:
//  1. aiadmit.dev/workload, the developer's statement, wins: the pod
//     template's value (the one a controller's Pods carry) before the
//     object's own, so that a controller and its Pods always agree;
//  2. else aiadmit.dev/profile naming a profile: the developer chose that
//     profile, and with it its class (unless aiadmit.dev/class is there too:
//     then the profile annotation is aiadmit's record of its last decision);
//  3. else aiadmit.dev/class, which aiadmit stamps on what it admitted, so
//     that Pods (and Jobs of a CronJob) created by a controller keep its class;
//     on an object a controller made, only when it asks for GPUs itself (an
//     operator copies one template's stamp onto Pods that ask for none);
//  4. else, for an object that asks for an accelerator (a resource that looks
//     like one, a GPU claim, a KAI GPU share, or aiadmit.dev/gpus), its
//     kind and what it shows: Deployment, StatefulSet, ReplicaSet are
//     realtime; Job, CronJob batch; a bare Pod realtime when its
//     restartPolicy is Always (the default) and a container declares a port,
//     else batch; and a workload its kind makes batch is training when it
//     shows a sign of training (a launcher, a training program: the signs of
//     webhook/policy/training_evidence.h), since the kind cannot tell a
//     training run from batch inference and the object often can;
//  5. else it is not an AI workload.
// 1 and 2 are declared; 3 and 4 are inferred, and the rules whose premise is
// the class only warn on an inferred one (webhook/policy/rules.h).
// A value of aiadmit.dev/workload that is not a class is reported (AIA001) and
// the class then comes from the kind.
#pragma once

#include <cstddef>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "webhook/model/annotations.h"
#include "webhook/model/pod_reader.h"
#include "webhook/model/workload.h"

namespace aiadmit {

// What decided the class.
enum class ClassBasis {
  None,                // not an AI workload
  WorkloadAnnotation,  // aiadmit.dev/workload: declared
  ProfileAnnotation,   // aiadmit.dev/profile naming a profile of the class: declared
  ClassStamp,          // aiadmit.dev/class, stamped by aiadmit: inferred
  Kind,                // kind and accelerator request (or an unknown annotation value): inferred
  Evidence,            // a sign of training over the kind's batch (training_evidence.h): inferred
};

class ProfileSet;

struct Classification {
  WorkloadClass workloadClass = WorkloadClass::None;
  std::string reason;  // one line a developer can read: why this class
  // Set when aiadmit.dev/workload holds a value that is not a class (AIA001),
  // on the pod template or on the object.
  std::optional<std::string> unknownWorkloadValue;
  ClassBasis basis = ClassBasis::None;

  bool isAiWorkload() const { return workloadClass != WorkloadClass::None; }
  // The developer stated the class: rules whose premise is the class may
  // enforce it. An inferred class is reported and warned about.
  bool declared() const {
    return basis == ClassBasis::WorkloadAnnotation || basis == ClassBasis::ProfileAnnotation;
  }
};

Classification classify(const PodTemplateView& view);
// The same with the pod reader the caller already has for the template.
// `madeByController`: an ownerReference with controller: true made the
// object (the engine knows); a class stamp alone then does not classify it.
// `profiles`: where a profile named by aiadmit.dev/profile is looked up for
// its class; null: a named profile declares nothing.
Classification classify(const PodTemplateView& view, const PodReader& pod,
                        bool madeByController = false, const ProfileSet* profiles = nullptr);

// The class of a whole workload, from each of its templates: the strongest
// basis any template has (the developer's annotation, then the profile the
// developer named, then aiadmit's stamp, then the kind with an accelerator
// request), the first template among equals. A workload whose templates all
// ask for nothing is not an AI workload. One that its kind makes batch and
// that shows a sign of training is training (ClassBasis::Evidence), unless a
// controller made it: what it shows was read on its controller's workload.
struct WorkloadClassification {
  Classification classification;
  std::optional<size_t> decidingTemplate;  // the template the class came from
  // The first that asks for an accelerator, else the first that names one.
  std::optional<size_t> acceleratorTemplate;
  // The template whose labels and annotations select the profile: the first
  // that asks for an accelerator, else the one that decided, else the first.
  size_t primaryTemplate() const;
};
WorkloadClassification classifyWorkload(std::span<const PodTemplateView> templates,
                                        std::span<const PodReader> pods,
                                        bool madeByController = false,
                                        const ProfileSet* profiles = nullptr);

// An aiadmit annotation as the workload declares it: the pod template's value
// when present (what the controller's Pods carry), else the object's; nullopt
// when neither has it as a string. For a Pod both are its own metadata.
std::optional<std::string_view> declaredAnnotation(const PodTemplateView& view,
                                                   std::string_view key);

}  // namespace aiadmit
