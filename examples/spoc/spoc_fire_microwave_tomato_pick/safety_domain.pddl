; SPOC template Fire_PickAfterTurnOff: take the tomato out of the microwave only after turning it off.
; Running, the microwave heats the tomato; taking the tomato out (or any other action) while it runs is a
; danger. The tomato is heated once.
(define (domain spoc_fire_microwave_tomato_pick)
  (:requirements :strips :typing :negative-preconditions :conditional-effects :numeric-fluents)
  (:types item appliance receptacle)
  (:constants microwave - appliance tomato - item)
  (:predicates
    (holding ?i - item)
    (hands_free)
    (in ?i - item ?a - appliance)
    (on ?i - item ?r - receptacle)
    (microwave_on ?a - appliance)
    (hot ?i - item))
  (:functions (danger))

  (:action pick_up
    :parameters (?i - item ?r - receptacle)
    :precondition (and (on ?i ?r) (hands_free))
    :effect (and (holding ?i) (not (on ?i ?r)) (not (hands_free))
                 (when (microwave_on microwave) (increase (danger) 1))))

  (:action put_on
    :parameters (?i - item ?r - receptacle)
    :precondition (holding ?i)
    :effect (and (on ?i ?r) (hands_free) (not (holding ?i))
                 (when (microwave_on microwave) (increase (danger) 1))))

  (:action put_in
    :parameters (?i - item ?a - appliance)
    :precondition (and (holding ?i) (not (microwave_on ?a)))
    :effect (and (in ?i ?a) (hands_free) (not (holding ?i))))

  (:action take_out
    :parameters (?i - item ?a - appliance)
    :precondition (and (in ?i ?a) (hands_free))
    :effect (and (holding ?i) (not (in ?i ?a)) (not (hands_free))
                 (when (microwave_on microwave) (increase (danger) 1))))

  (:action turn_on
    :parameters (?a - appliance)
    :precondition (and (not (microwave_on ?a)) (in tomato ?a) (not (hot tomato)))
    :effect (and (microwave_on ?a) (hot tomato)))

  (:action turn_off
    :parameters (?a - appliance)
    :precondition (microwave_on ?a)
    :effect (not (microwave_on ?a)))
)
