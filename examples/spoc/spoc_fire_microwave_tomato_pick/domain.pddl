(define (domain basic-domain)
  (:requirements :strips :typing :negative-preconditions :conditional-effects)
  (:types item appliance receptacle)
  (:constants microwave - appliance tomato - item)
  (:predicates
    (holding ?i - item)
    (hands_free)
    (in ?i - item ?a - appliance)
    (on ?i - item ?r - receptacle)
    (microwave_on ?a - appliance)
    (hot ?i - item)
  )
  (:action pick_up
    :parameters (?i - item ?r - receptacle)
    :precondition (and (on ?i ?r) (hands_free))
    :effect (and (holding ?i) (not (on ?i ?r)) (not (hands_free))))
  (:action put_on
    :parameters (?i - item ?r - receptacle)
    :precondition (holding ?i)
    :effect (and (on ?i ?r) (hands_free) (not (holding ?i))))
  (:action put_in
    :parameters (?i - item ?a - appliance)
    :precondition (and (holding ?i) (not (microwave_on ?a)))
    :effect (and (in ?i ?a) (hands_free) (not (holding ?i))))
  (:action take_out
    :parameters (?i - item ?a - appliance)
    :precondition (and (in ?i ?a) (hands_free))
    :effect (and (holding ?i) (not (in ?i ?a)) (not (hands_free))))
  (:action turn_on
    :parameters (?a - appliance)
    :precondition (and (not (microwave_on ?a)) (in tomato ?a) (not (hot tomato)))
    :effect (and (microwave_on ?a) (hot tomato)))
  (:action turn_off
    :parameters (?a - appliance)
    :precondition (microwave_on ?a)
    :effect (not (microwave_on ?a)))
)
